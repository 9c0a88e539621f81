package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Tile;

/**
 * A row-major matrix in device memory of this process: {@code rows} rows of {@code cols}
 * elements, {@code ld} elements from the start of one row to the next ({@code ld >= cols}). What
 * {@link Gemm} works on underneath its {@link SymTensor} methods, and how a fused kernel that
 * reuses the GEMM's checks and tensor maps hands over plain device memory (a
 * {@link dev.irisjvm.core.gpu.DeviceMemory}, a peer's mapped heap, a window of a larger matrix).
 *
 * <pre>{@code
 * DeviceMatrix a = DeviceMatrix.of(x);                          // a rank-2 SymTensor
 * DeviceMatrix rows = DeviceMatrix.of(x.tile(256, 0, 512, k));  // rows 256..767 of it (ld = k)
 * DeviceMatrix w = new DeviceMatrix(mem.address(), DType.BF16, n, k, k);
 * }</pre>
 *
 * <p>Nothing is checked here beyond non-null: {@link GemmProblem} checks what the GEMM needs and
 * names the operand.
 *
 * @param address device address of element (0, 0)
 * @param dtype   element type
 * @param rows    number of rows
 * @param cols    elements per row
 * @param ld      leading dimension: elements from one row's start to the next's
 */
public record DeviceMatrix(long address, DType dtype, long rows, long cols, long ld) {
    public DeviceMatrix {
        if (dtype == null) {
            throw new IllegalArgumentException("DeviceMatrix: dtype must not be null");
        }
    }

    /** A contiguous rows x cols matrix (ld = cols). */
    public static DeviceMatrix contiguous(long address, DType dtype, long rows, long cols) {
        return new DeviceMatrix(address, dtype, rows, cols, cols);
    }

    /** A rank-2 symmetric tensor, this rank's copy: shape [rows, cols], contiguous. */
    public static DeviceMatrix of(SymTensor t) {
        if (t == null) {
            throw new IllegalArgumentException("DeviceMatrix.of: tensor must not be null");
        }
        long[] shape = t.shape();
        if (shape.length != 2) {
            throw new IllegalArgumentException("DeviceMatrix.of: " + t + " has rank " + shape.length + "; expected a rank-2 tensor");
        }
        return new DeviceMatrix(t.deviceAddress(), t.dtype(), shape[0], shape[1], shape[1]);
    }

    /** A window of a symmetric tensor's matrix view, this rank's copy (ld = the tensor's last dimension). */
    public static DeviceMatrix of(Tile tile) {
        if (tile == null) {
            throw new IllegalArgumentException("DeviceMatrix.of: tile must not be null");
        }
        SymTensor t = tile.tensor();
        long[] shape = t.shape();
        long ld = shape.length == 0 ? 1 : shape[shape.length - 1];
        long address = t.deviceAddress() + (tile.row0() * ld + tile.col0()) * t.dtype().byteSize();
        return new DeviceMatrix(address, t.dtype(), tile.rows(), tile.cols(), ld);
    }

    /**
     * Bytes from the first element to one past the last: ((rows - 1) ld + cols) x element bytes;
     * Long.MAX_VALUE where that overflows, 0 for an empty matrix.
     */
    public long spanBytes() {
        if (rows < 1 || cols < 1) {
            return 0;
        }
        try {
            return Math.multiplyExact(Math.addExact(Math.multiplyExact(rows - 1, ld), cols), (long) dtype.byteSize());
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Bytes from one row to the next. */
    public long rowStrideBytes() {
        return ld * dtype.byteSize();
    }

    @Override
    public String toString() {
        return dtype + " " + rows + " x " + cols + (ld == cols ? "" : " (ld " + ld + ")") + " at 0x" + Long.toHexString(address);
    }
}

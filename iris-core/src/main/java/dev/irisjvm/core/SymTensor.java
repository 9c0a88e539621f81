package dev.irisjvm.core;

import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * A tensor on the symmetric heap: every rank holds a copy at the same heap offset, so a kernel on
 * one rank can address any rank's copy. Row-major with explicit strides (in elements).
 *
 * <p>Allocation and {@link #close()} are collective: every rank creates and closes the same
 * tensors in the same order. A tensor is freed once: using it afterwards, or closing it again,
 * raises {@link IllegalStateException} naming the tensor and the rank.
 *
 * <p>Views ({@link #rows}, {@link #chunk}, {@link #slice}, {@link #reshape}) are tensors over a
 * contiguous part of another tensor's elements, without a copy and without an allocation: they
 * need no collective call, they are symmetric like the tensor they come from (the same heap offset
 * on every rank), every operation takes them where it takes a tensor, and they live as long as the
 * tensor they come from (closing a view does nothing).
 *
 * <pre>{@code
 * try (SymTensor x = heap.zeros(DType.F32, 4, 1024)) {
 *     x.copyFrom(values);                       // float[4096]
 *     x.tile(0, 0, 1, 1024).on(1).storeRemote(x.tile(1, 0, 1, 1024));
 *     float[] back = x.toFloatArray();
 *     SymTensor mine = x.chunk(iris.rank(), iris.worldSize());   // this rank's rows of a gathered buffer
 * }
 * }</pre>
 */
public final class SymTensor implements AutoCloseable {
    private final SymmetricHeap heap;
    private final DType dtype;
    private final long[] shape;
    private final long[] strides;
    private final long offset;
    private final long numel;
    /** The tensor whose heap block this one is: itself, or the allocation a view was taken from. */
    private final SymTensor owner;
    /** null while live; then who freed it: "close()" or "Iris.close()". Only the owner's counts. */
    private final AtomicReference<String> freedBy = new AtomicReference<>();

    SymTensor(SymmetricHeap heap, DType dtype, long[] shape, long offset) {
        this(heap, dtype, shape, offset, null);
    }

    private SymTensor(SymmetricHeap heap, DType dtype, long[] shape, long offset, SymTensor owner) {
        this.heap = heap;
        this.dtype = dtype;
        this.shape = shape.clone();
        this.strides = contiguousStrides(shape);
        this.offset = offset;
        this.numel = numel(shape);
        this.owner = owner == null ? this : owner;
    }

    static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    private static long[] contiguousStrides(long[] shape) {
        long[] s = new long[shape.length];
        long stride = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[i] = stride;
            stride *= shape[i];
        }
        return s;
    }

    public DType dtype() {
        return dtype;
    }

    public long[] shape() {
        return shape.clone();
    }

    /** Strides in elements. */
    public long[] strides() {
        return strides.clone();
    }

    public long numel() {
        return numel;
    }

    public long byteSize() {
        return numel * dtype.byteSize();
    }

    /** Offset of the first element from the start of the heap; the same on every rank. */
    public long heapOffset() {
        return offset;
    }

    /** This rank's device address of the first element. */
    public long deviceAddress() {
        ensureLive("deviceAddress");
        return heap.base() + offset;
    }

    /**
     * Node rank {@code rank}'s copy of the first element, as mapped in this process (for kernels);
     * node ranks index {@link Iris#node()}, the ranks the heap spans.
     */
    public long deviceAddress(int rank) {
        heap.iris().checkNodeRank(rank, "SymTensor.deviceAddress");
        return heap.iris().deviceContext().translate(deviceAddress(), rank);
    }

    public SymmetricHeap heap() {
        return heap;
    }

    public boolean isLive() {
        return owner.freedBy.get() == null;
    }

    /** Whether this tensor is a view of another one's elements (it owns no heap block). */
    public boolean isView() {
        return owner != this;
    }

    // ---- views --------------------------------------------------------------------------------

    /**
     * Rows {@code [start, start + count)} of dimension 0, every other dimension whole: a view.
     *
     * @throws IllegalArgumentException naming the rank when the rows are not inside the tensor
     */
    public SymTensor rows(long start, long count) {
        ensureLive("rows");
        if (shape.length == 0) {
            throw new IllegalArgumentException(rankLabel() + ": rows: tensor " + describe() + " is a scalar; it has no rows");
        }
        if (start < 0 || count < 0 || start > shape[0] - count) {
            throw new IllegalArgumentException(rankLabel() + ": rows(" + start + ", " + count + "): tensor " + describe()
                    + " has rows [0, " + shape[0] + ")");
        }
        long[] s = shape.clone();
        s[0] = count;
        return view(start * strides[0], s);
    }

    /**
     * Part {@code index} of {@code parts} equal parts along dimension 0, a view: rank r's shard of
     * a buffer that an all-gather fills is {@code gathered.chunk(r, world)}.
     *
     * @throws IllegalArgumentException naming the rank when parts does not divide dimension 0 or
     *                                  index is not in [0, parts)
     */
    public SymTensor chunk(int index, int parts) {
        ensureLive("chunk");
        long rows = shape.length == 0 ? 1 : shape[0];
        if (parts < 1 || index < 0 || index >= parts || rows % parts != 0) {
            throw new IllegalArgumentException(rankLabel() + ": chunk(" + index + ", " + parts + "): tensor " + describe()
                    + " needs parts >= 1 dividing its " + rows + " rows and index in [0, parts)");
        }
        return rows(index * (rows / parts), rows / parts);
    }

    /**
     * Elements {@code [start, start + count)} of the tensor in row-major order, as a
     * one-dimensional view.
     *
     * @throws IllegalArgumentException naming the rank when the range is not inside the tensor
     */
    public SymTensor slice(long start, long count) {
        ensureLive("slice");
        if (start < 0 || count < 0 || start > numel - count) {
            throw new IllegalArgumentException(rankLabel() + ": slice(" + start + ", " + count + "): tensor " + describe()
                    + " has elements [0, " + numel + ")");
        }
        return view(start, new long[] {count});
    }

    /**
     * The same elements in another shape with the same element count, a view; one dimension may
     * be -1, for what the others leave.
     *
     * @throws IllegalArgumentException naming the rank when the counts differ
     */
    public SymTensor reshape(long... newShape) {
        ensureLive("reshape");
        long[] s = newShape.clone();
        int inferred = -1;
        long known = 1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == -1 && inferred < 0) {
                inferred = i;
            } else if (s[i] < 0) {
                throw new IllegalArgumentException(rankLabel() + ": reshape" + Arrays.toString(newShape) + ": dimension " + i
                        + " is " + s[i] + "; dimensions are >= 0, one of them may be -1");
            } else {
                known = Math.multiplyExact(known, s[i]);
            }
        }
        if (inferred >= 0 && known != 0 && numel % known == 0) {
            s[inferred] = numel / known;
        }
        if (inferred >= 0 && s[inferred] == -1 || numel(s) != numel) {
            throw new IllegalArgumentException(rankLabel() + ": reshape" + Arrays.toString(newShape) + ": tensor " + describe()
                    + " has " + numel + " elements");
        }
        return view(0, s);
    }

    private SymTensor view(long elementOffset, long[] viewShape) {
        return new SymTensor(heap, dtype, viewShape, offset + elementOffset * dtype.byteSize(), owner);
    }

    /** The window rows [row0, row0+rows) x cols [col0, col0+cols) of this tensor's matrix view. */
    public Tile tile(long row0, long col0, long rows, long cols) {
        ensureLive("tile");
        return new Tile(this, row0, col0, rows, cols);
    }

    /** The whole tensor as one tile. */
    public Tile whole() {
        return tile(0, 0, matrixRows(), matrixCols());
    }

    long matrixCols() {
        return shape.length == 0 ? 1 : shape[shape.length - 1];
    }

    long matrixRows() {
        return numel / Math.max(1, matrixCols());
    }

    long matrixLeadingDimension() {
        return matrixCols();
    }

    // ---- copies between the host and this rank's copy ----------------------------------------

    /** Copies raw bytes (native byte order) from the buffer's remaining bytes, which must fill the tensor. */
    public void copyFrom(ByteBuffer source) {
        ensureLive("copyFrom");
        if (source.remaining() != byteSize()) {
            throw new IllegalArgumentException(rankLabel() + ": copyFrom: buffer has " + source.remaining()
                    + " bytes remaining, tensor " + describe() + " needs " + byteSize());
        }
        Stream s = heap.iris().stream();
        if (source.isDirect()) {
            Memcpy.hostToDevice(deviceAddress(), new Pointer(source), byteSize(), s);
            heap.iris().synchronize();
            return;
        }
        try (BytePointer staging = new BytePointer(byteSize())) {
            staging.asByteBuffer().put(source.duplicate());
            Memcpy.hostToDevice(deviceAddress(), staging, byteSize(), s);
            heap.iris().synchronize();
        }
    }

    /** Copies the tensor's bytes (native byte order) into the buffer's remaining space. */
    public void copyTo(ByteBuffer target) {
        ensureLive("copyTo");
        if (target.remaining() < byteSize()) {
            throw new IllegalArgumentException(rankLabel() + ": copyTo: buffer has " + target.remaining()
                    + " bytes remaining, tensor " + describe() + " has " + byteSize());
        }
        Stream s = heap.iris().stream();
        if (target.isDirect()) {
            Memcpy.deviceToHost(new Pointer(target), deviceAddress(), byteSize(), s);
            heap.iris().synchronize();
            target.position(target.position() + (int) byteSize());
            return;
        }
        try (BytePointer staging = new BytePointer(byteSize())) {
            Memcpy.deviceToHost(staging, deviceAddress(), byteSize(), s);
            heap.iris().synchronize();
            target.put(staging.asByteBuffer());
        }
    }

    private ByteBuffer stagingFor(long count, String op) {
        if (count != numel) {
            throw new IllegalArgumentException(rankLabel() + ": " + op + ": array has " + count + " elements, tensor "
                    + describe() + " has " + numel);
        }
        if (byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(rankLabel() + ": " + op + ": tensor of " + byteSize()
                    + " bytes is too large for a Java array copy; use copyFrom(ByteBuffer) in pieces");
        }
        return ByteBuffer.allocateDirect((int) byteSize()).order(ByteOrder.nativeOrder());
    }

    private void requireDType(String op, DType... allowed) {
        for (DType d : allowed) {
            if (d == dtype) {
                return;
            }
        }
        throw new IllegalArgumentException(rankLabel() + ": " + op + ": tensor has dtype " + dtype + ", expected one of "
                + Arrays.toString(allowed));
    }

    /** From floats: F32 exactly, F16 and BF16 rounded to nearest even. */
    public void copyFrom(float[] values) {
        requireDType("copyFrom(float[])", DType.F32, DType.F16, DType.BF16);
        ByteBuffer b = stagingFor(values.length, "copyFrom(float[])");
        for (float v : values) {
            dtype.put(b, v);
        }
        copyFrom(b.flip());
    }

    /** From doubles, converted to the tensor's dtype (integers truncate toward zero). */
    public void copyFrom(double[] values) {
        ByteBuffer b = stagingFor(values.length, "copyFrom(double[])");
        for (double v : values) {
            dtype.put(b, v);
        }
        copyFrom(b.flip());
    }

    public void copyFrom(int[] values) {
        requireDType("copyFrom(int[])", DType.I32);
        ByteBuffer b = stagingFor(values.length, "copyFrom(int[])");
        b.asIntBuffer().put(values);
        copyFrom(b);
    }

    public void copyFrom(long[] values) {
        requireDType("copyFrom(long[])", DType.I64);
        ByteBuffer b = stagingFor(values.length, "copyFrom(long[])");
        b.asLongBuffer().put(values);
        copyFrom(b);
    }

    public void copyFrom(byte[] values) {
        requireDType("copyFrom(byte[])", DType.U8);
        ByteBuffer b = stagingFor(values.length, "copyFrom(byte[])");
        b.put(values);
        copyFrom(b.flip());
    }

    private ByteBuffer download(String op) {
        ByteBuffer b = stagingFor(numel, op);
        copyTo(b);
        return b.flip();
    }

    public float[] toFloatArray() {
        requireDType("toFloatArray", DType.F32, DType.F16, DType.BF16);
        ByteBuffer b = download("toFloatArray");
        float[] out = new float[(int) numel];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) dtype.get(b);
        }
        return out;
    }

    /** Every dtype, converted exactly (I64 beyond 2^53 rounds). */
    public double[] toDoubleArray() {
        ByteBuffer b = download("toDoubleArray");
        double[] out = new double[(int) numel];
        for (int i = 0; i < out.length; i++) {
            out[i] = dtype.get(b);
        }
        return out;
    }

    public int[] toIntArray() {
        requireDType("toIntArray", DType.I32);
        int[] out = new int[(int) numel];
        download("toIntArray").asIntBuffer().get(out);
        return out;
    }

    public long[] toLongArray() {
        requireDType("toLongArray", DType.I64);
        long[] out = new long[(int) numel];
        download("toLongArray").asLongBuffer().get(out);
        return out;
    }

    public byte[] toByteArray() {
        requireDType("toByteArray", DType.U8);
        byte[] out = new byte[(int) numel];
        download("toByteArray").get(out);
        return out;
    }

    // ---- lifetime ----------------------------------------------------------------------------

    /**
     * Frees this tensor's heap block. Collective: every rank closes the same tensors in the same
     * order. A view owns no block: closing it does nothing.
     *
     * @throws IllegalStateException if it was freed already (by an earlier close, or by
     *                               {@link Iris#close()}): a double free names the tensor and the rank
     */
    @Override
    public void close() {
        if (isView()) {
            return;  // the memory is the owner's, freed with it
        }
        if (!freedBy.compareAndSet(null, "close()")) {
            throw new IllegalStateException(rankLabel() + ": close: tensor " + describe() + " was already freed by "
                    + freedBy.get() + "; a tensor is freed exactly once (a double free)");
        }
        heap.release(this);
    }

    /**
     * {@link #close()} unless the tensor is freed already: for owners of tensors (workspaces) that
     * may be closed after their {@link Iris}, whose close frees every tensor. Collective like close.
     */
    public void closeIfLive() {
        if (!isView() && freedBy.compareAndSet(null, "close()")) {
            heap.release(this);
        }
    }

    /** The heap is going away with its Iris instance: this tensor is gone without a collective free. */
    void markFreedAtClose() {
        freedBy.compareAndSet(null, "Iris.close()");
    }

    void ensureLive(String op) {
        String by = owner.freedBy.get();
        if (by != null) {
            throw new IllegalStateException(rankLabel() + ": " + op + ": tensor " + describe() + " was freed"
                    + (by.equals("Iris.close()") ? " by Iris.close()" : ""));
        }
        heap.iris().ensureOpen(op);
    }

    String rankLabel() {
        return "rank " + heap.iris().rank();
    }

    String describe() {
        return dtype + Arrays.toString(shape) + "@" + offset + (isView() ? " (view)" : "");
    }

    @Override
    public String toString() {
        return "SymTensor(" + describe() + (isLive() ? "" : ", freed") + ")";
    }
}

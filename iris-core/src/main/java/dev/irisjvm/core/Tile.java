package dev.irisjvm.core;

/**
 * A rows x cols window of a symmetric tensor, seen as a matrix: a 1-D tensor is one row, an N-D
 * tensor is (product of leading dimensions) x (last dimension).
 *
 * <pre>{@code
 * Tile block = tensor.tile(64, 128, 32, 32);          // rows 64..95, columns 128..159
 * RemoteTile there = block.on(peer);                  // the same window in the peer's copy
 * }</pre>
 */
public record Tile(SymTensor tensor, long row0, long col0, long rows, long cols) {
    public Tile {
        if (tensor == null) {
            throw new IllegalArgumentException("tile: tensor must not be null");
        }
        checkBounds(tensor.rankLabel(), tensor.matrixRows(), tensor.matrixCols(), row0, col0, rows, cols);
    }

    /** Throws unless the window lies inside a tensorRows x tensorCols matrix. */
    static void checkBounds(String who, long tensorRows, long tensorCols, long row0, long col0, long rows, long cols) {
        if (rows < 1 || cols < 1) {
            throw new IllegalArgumentException(who + ": tile size must be at least 1 x 1, got " + rows + " x " + cols);
        }
        if (row0 < 0 || col0 < 0 || row0 > tensorRows - rows || col0 > tensorCols - cols) {
            throw new IndexOutOfBoundsException(who + ": tile rows [" + row0 + ", " + (row0 + rows) + ") x cols [" + col0
                    + ", " + (col0 + cols) + ") lies outside the tensor's " + tensorRows + " x " + tensorCols + " matrix");
        }
    }

    /** The same window in rank {@code rank}'s copy of the tensor. */
    public RemoteTile on(int rank) {
        return new RemoteTile(this, rank);
    }

    /** Leading dimension (elements between rows). */
    long leadingDimension() {
        return tensor.matrixLeadingDimension();
    }

    /** Address of the first element in this rank's heap. */
    long address() {
        return tensor.deviceAddress() + (row0 * leadingDimension() + col0) * tensor.dtype().byteSize();
    }

    long elements() {
        return rows * cols;
    }

    boolean sameShape(Tile other) {
        return rows == other.rows && cols == other.cols;
    }
}

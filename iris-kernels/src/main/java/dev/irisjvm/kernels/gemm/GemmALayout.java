package dev.irisjvm.kernels.gemm;

/**
 * How the GEMM's A operand is stored in global memory (both row-major). Either way the product is
 * {@code C[m][n] = sum_k A(m, k) * B(k, n)}.
 *
 * <pre>{@code
 * // dW = dY^T X of a Linear layer: dY [T, out] is A stored K x M, X [T, in] is B stored K x N.
 * gemm.matmul(dy, x, GemmLayouts.KM_KN, dw, 1f, 0f, stream);
 * }</pre>
 */
public enum GemmALayout {
    /** A is M x K, K contiguous: the usual activation, {@code C = A B}. */
    MK("mk", "M x K"),
    /**
     * A is K x M, M contiguous: the GEMM reads its transpose, {@code C = A^T B} of the stored A, as in
     * a weight gradient. The same TMA and wgmma pipeline, with M-major shared-memory tiles.
     */
    KM("km", "K x M");

    private final String suffix;
    private final String shape;

    GemmALayout(String suffix, String shape) {
        this.suffix = suffix;
        this.shape = shape;
    }

    /** "mk" or "km". */
    public String suffix() {
        return suffix;
    }

    /** "M x K" or "K x M": A's rows x columns. */
    public String shape() {
        return shape;
    }

    /** A's rows for a problem of that size: M for MK, K for KM. */
    public long aRows(long m, long k) {
        return this == MK ? m : k;
    }

    /** A's columns (its contiguous dimension): K for MK, M for KM. */
    public long aCols(long m, long k) {
        return this == MK ? k : m;
    }

    /** E.g. "A (km: K x M)", for messages. */
    String describeA() {
        return "A (" + suffix + ": " + shape + ")";
    }
}

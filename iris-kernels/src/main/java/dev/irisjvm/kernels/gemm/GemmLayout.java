package dev.irisjvm.kernels.gemm;

/**
 * How the GEMM's B operand is stored in global memory (both row-major). Either way the product is
 * {@code C[m][n] = sum_k A[m][k] * B(k, n)}.
 */
public enum GemmLayout {
    /**
     * B is N x K, K contiguous: the "transposed" layout of a PyTorch {@code Linear} weight
     * ({@code out_features x in_features}), so {@code C = A B^T}.
     */
    NK("nk", "N x K"),
    /** B is K x N, N contiguous: the plain layout, {@code C = A B}. */
    KN("kn", "K x N");

    private final String suffix;
    private final String shape;

    GemmLayout(String suffix, String shape) {
        this.suffix = suffix;
        this.shape = shape;
    }

    /**
     * The part of the kernel name with an M x K A: {@code iris_gemm_bf16_<nk|kn>_bf16} ({@link
     * GemmLayouts#kernelPart()} names both layouts).
     */
    public String kernelSuffix() {
        return suffix;
    }

    /** "N x K" or "K x N": B's rows x columns. */
    public String shape() {
        return shape;
    }

    /** B's rows for a problem of that size: N for NK, K for KN. */
    public long bRows(long n, long k) {
        return this == NK ? n : k;
    }

    /** B's columns (its contiguous dimension): K for NK, N for KN. */
    public long bCols(long n, long k) {
        return this == NK ? k : n;
    }

    /** E.g. "B (nk: N x K)", for messages. */
    String describeB() {
        return "B (" + suffix + ": " + shape + ")";
    }
}

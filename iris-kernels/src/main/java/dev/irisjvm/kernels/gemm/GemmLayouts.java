package dev.irisjvm.kernels.gemm;

/**
 * How both operands of a GEMM are stored: A's layout and B's. The four combinations have names,
 * read as A's storage then B's:
 *
 * <pre>{@code
 * gemm.matmul(x, w, GemmLayouts.MK_NK, y, 1f, 0f, stream);     // forward:        y  = x w^T
 * gemm.matmul(dy, w, GemmLayouts.MK_KN, dx, 1f, 0f, stream);   // input gradient: dx = dy w
 * gemm.matmul(dy, x, GemmLayouts.KM_KN, dw, 1f, 1f, stream);   // weight gradient, accumulated: dw += dy^T x
 * }</pre>
 *
 * @param a how A is stored: M x K or K x M
 * @param b how B is stored: N x K or K x N
 */
public record GemmLayouts(GemmALayout a, GemmLayout b) {
    /** A M x K, B N x K: {@code C = A B^T} of the stored matrices (a Linear layer's forward pass). */
    public static final GemmLayouts MK_NK = new GemmLayouts(GemmALayout.MK, GemmLayout.NK);
    /** A M x K, B K x N: {@code C = A B}. */
    public static final GemmLayouts MK_KN = new GemmLayouts(GemmALayout.MK, GemmLayout.KN);
    /** A K x M, B N x K: {@code C = A^T B^T} of the stored matrices. */
    public static final GemmLayouts KM_NK = new GemmLayouts(GemmALayout.KM, GemmLayout.NK);
    /** A K x M, B K x N: {@code C = A^T B} of the stored matrices (a weight gradient). */
    public static final GemmLayouts KM_KN = new GemmLayouts(GemmALayout.KM, GemmLayout.KN);

    public GemmLayouts {
        if (a == null || b == null) {
            throw new IllegalArgumentException(GemmChecks.who() + ": " + (a == null ? "A's" : "B's") + " layout must not be null");
        }
    }

    /** The part of the kernel name after the input dtype: "nk", "kn", "km_nk" or "km_kn". */
    public String kernelPart() {
        return (a == GemmALayout.MK ? "" : a.suffix() + "_") + b.kernelSuffix();
    }

    @Override
    public String toString() {
        return a.name() + "_" + b.name();
    }
}

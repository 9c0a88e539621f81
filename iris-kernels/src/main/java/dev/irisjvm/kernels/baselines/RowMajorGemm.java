package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;

/**
 * A vendor GEMM on row-major device operands ({@link CublasGemm}, {@link CublasLtGemm}): one call
 * with every leading dimension, and the shorthands for contiguous operands and for an M x K A.
 */
public interface RowMajorGemm {
    /**
     * {@code C = A B (+ C when accumulate)} on row-major operands: A per layout (ld lda), B per
     * layout (ld ldb), C M x N (ld ldc); A and B of type {@code in}, C of type {@code out}.
     */
    void gemm(GemmLayouts layouts, DType in, DType out, int m, int n, int k, long a, int lda, long b, int ldb, long c, int ldc,
              boolean accumulate);

    /** Contiguous operands: lda = A's columns, ldb = B's columns, ldc = N. */
    default void gemm(GemmLayouts layouts, DType in, DType out, int m, int n, int k, long a, long b, long c, boolean accumulate) {
        gemm(layouts, in, out, m, n, k, a, (int) layouts.a().aCols(m, k), b, (int) layouts.b().bCols(n, k), c, n, accumulate);
    }

    /** An M x K A (ld lda) and B per layout. */
    default void gemm(GemmLayout layout, DType in, DType out, int m, int n, int k, long a, int lda, long b, int ldb, long c, int ldc,
                      boolean accumulate) {
        gemm(new GemmLayouts(GemmALayout.MK, layout), in, out, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    }

    /** An M x K A and B per layout, contiguous: lda = K, ldb = B's columns, ldc = N. */
    default void gemm(GemmLayout layout, DType in, DType out, int m, int n, int k, long a, long b, long c, boolean accumulate) {
        gemm(new GemmLayouts(GemmALayout.MK, layout), in, out, m, n, k, a, b, c, accumulate);
    }
}

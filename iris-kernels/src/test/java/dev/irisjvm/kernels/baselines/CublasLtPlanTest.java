package dev.irisjvm.kernels.baselines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.baselines.CublasLtPlan.ColumnMajor;
import dev.irisjvm.kernels.baselines.CublasLtPlan.Problem;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.Random;
import org.bytedeco.cuda.global.cublas;
import org.junit.jupiter.api.Test;

/**
 * The row-major problem as cuBLASLt's column-major one, checked by its law on the CPU: cuBLASLt's
 * {@code D = op(A) op(B)}, computed here from the descriptions alone over our row-major buffers
 * (with padded rows), is our {@code C = A B} at every element, for every layout pair. No GPU needed.
 */
class CublasLtPlanTest {
    private static final int PAD = 3;

    @Test
    void columnMajorViewComputesTheRowMajorProduct() {
        int m = 5, n = 7, k = 4;
        Random r = new Random(11);
        for (GemmLayouts layouts : new GemmLayouts[] {GemmLayouts.MK_NK, GemmLayouts.MK_KN, GemmLayouts.KM_NK, GemmLayouts.KM_KN}) {
            GemmLayout layout = layouts.b();
            GemmALayout aLayout = layouts.a();
            int lda = (int) aLayout.aCols(m, k) + PAD, ldb = (int) layout.bCols(n, k) + PAD, ldc = n + PAD;
            double[] a = random(r, (int) aLayout.aRows(m, k) * lda);
            double[] b = random(r, (int) layout.bRows(n, k) * ldb);
            ColumnMajor cm = ColumnMajor.of(new Problem(layouts, DType.BF16, DType.BF16, m, n, k, lda, ldb, ldc));
            assertEquals(layout == GemmLayout.NK ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N, cm.transA(), layouts + ": transA");
            assertEquals(aLayout == GemmALayout.KM ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N, cm.transB(), layouts + ": transB");
            boolean t = cm.transA() == cublas.CUBLAS_OP_T;
            boolean tb = cm.transB() == cublas.CUBLAS_OP_T;
            // op(A) is (cRows x K), op(B) is (K x cCols): the shapes agree with D's.
            assertEquals(cm.cRows(), t ? cm.aCols() : cm.aRows(), layouts + ": op(A)'s rows");
            assertEquals(k, t ? cm.aRows() : cm.aCols(), layouts + ": op(A)'s columns");
            assertEquals(k, tb ? cm.bCols() : cm.bRows(), layouts + ": op(B)'s rows");
            assertEquals(cm.cCols(), tb ? cm.bRows() : cm.bCols(), layouts + ": op(B)'s columns");
            for (int i = 0; i < cm.cRows(); i++) {
                for (int j = 0; j < cm.cCols(); j++) {
                    double d = 0;
                    for (int p = 0; p < k; p++) {
                        // Column-major element (row, col) of a matrix with leading dimension ld is [row + col * ld].
                        double opA = t ? b[(int) (p + i * cm.lda())] : b[(int) (i + p * cm.lda())];
                        double opB = tb ? a[(int) (j + p * cm.ldb())] : a[(int) (p + j * cm.ldb())];
                        d += opA * opB;
                    }
                    // D (column-major, ldc) element (i, j) is C's element (j, i) at row-major [j * ldc + i].
                    int row = j, col = i;
                    assertEquals(cRowMajor(a, lda, aLayout, b, ldb, layout, k, row, col), d, 1e-12,
                            layouts + ": C(" + row + ", " + col + ") at D[" + (i + j * cm.ldc()) + "], ldc " + cm.ldc());
                    assertEquals((long) row * ldc + col, i + j * cm.ldc(), layouts + ": D's element is C's");
                }
            }
        }
    }

    private static double cRowMajor(double[] a, int lda, GemmALayout aLayout, double[] b, int ldb, GemmLayout layout, int k, int i,
                                    int j) {
        double s = 0;
        for (int p = 0; p < k; p++) {
            double aip = aLayout == GemmALayout.MK ? a[i * lda + p] : a[p * lda + i];
            double bpj = layout == GemmLayout.NK ? b[j * ldb + p] : b[p * ldb + j];
            s += aip * bpj;
        }
        return s;
    }

    private static double[] random(Random r, int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = r.nextInt(17) - 8;
        }
        return v;
    }
}

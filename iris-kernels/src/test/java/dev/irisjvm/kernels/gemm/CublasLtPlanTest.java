package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.CublasLtPlan.ColumnMajor;
import dev.irisjvm.kernels.gemm.CublasLtPlan.Problem;
import java.util.Random;
import org.bytedeco.cuda.global.cublas;
import org.junit.jupiter.api.Test;

/**
 * The row-major problem as cuBLASLt's column-major one, checked by its law on the CPU: cuBLASLt's
 * {@code D = op(A) op(B)}, computed here from the descriptions alone over our row-major buffers
 * (with padded rows), is our {@code C = A B} at every element, for both layouts. No GPU needed.
 */
class CublasLtPlanTest {
    private static final int PAD = 3;

    @Test
    void columnMajorViewComputesTheRowMajorProduct() {
        int m = 5, n = 7, k = 4;
        Random r = new Random(11);
        for (GemmLayout layout : GemmLayout.values()) {
            int lda = k + PAD, ldb = (int) layout.bCols(n, k) + PAD, ldc = n + PAD;
            double[] a = random(r, m * lda);
            double[] b = random(r, (int) layout.bRows(n, k) * ldb);
            ColumnMajor cm = ColumnMajor.of(new Problem(layout, DType.BF16, DType.BF16, m, n, k, lda, ldb, ldc));
            assertEquals(layout == GemmLayout.NK ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N, cm.transA(), layout + ": transA");
            boolean t = cm.transA() == cublas.CUBLAS_OP_T;
            // op(A) is (cRows x K), B is (K x cCols): the shapes agree with D's.
            assertEquals(cm.cRows(), t ? cm.aCols() : cm.aRows(), layout + ": op(A)'s rows");
            assertEquals(k, t ? cm.aRows() : cm.aCols(), layout + ": op(A)'s columns");
            assertEquals(k, cm.bRows(), layout + ": B's rows");
            assertEquals(cm.cCols(), cm.bCols(), layout + ": B's columns");
            for (int i = 0; i < cm.cRows(); i++) {
                for (int j = 0; j < cm.cCols(); j++) {
                    double d = 0;
                    for (int p = 0; p < k; p++) {
                        // Column-major element (row, col) of a matrix with leading dimension ld is [row + col * ld].
                        double opA = t ? b[(int) (p + i * cm.lda())] : b[(int) (i + p * cm.lda())];
                        d += opA * a[(int) (p + j * cm.ldb())];
                    }
                    // D (column-major, ldc) element (i, j) is C's element (j, i) at row-major [j * ldc + i].
                    int row = j, col = i;
                    assertEquals(cRowMajor(a, lda, b, ldb, layout, k, row, col), d, 1e-12,
                            layout + ": C(" + row + ", " + col + ") at D[" + (i + j * cm.ldc()) + "], ldc " + cm.ldc());
                    assertEquals((long) row * ldc + col, i + j * cm.ldc(), layout + ": D's element is C's");
                }
            }
        }
    }

    private static double cRowMajor(double[] a, int lda, double[] b, int ldb, GemmLayout layout, int k, int i, int j) {
        double s = 0;
        for (int p = 0; p < k; p++) {
            double bpj = layout == GemmLayout.NK ? b[j * ldb + p] : b[p * ldb + j];
            s += a[i * lda + p] * bpj;
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

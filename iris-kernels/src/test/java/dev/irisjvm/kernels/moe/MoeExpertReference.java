package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmErrorBound;

/**
 * The experts' GEMM and the whole expert layer (dispatch, GEMM, combine) in double on the host, with
 * the error bounds the GPU results must meet, for {@link MoeExpertGemmScenarios}.
 *
 * <p>An expert output element is {@code y = bf16(sum_h x_h w_h)} summed in f32: within {@link
 * #gemmBound} of the exact {@code Y} ({@link GemmErrorBound#element} plus the reference's own error).
 * The layer's element is combine's {@code bf16(sum_k a_k y_k)} over the token's delivered routes (f32
 * weights a_k, f32 fused multiply-adds): with {@code |y_k - Y_k| <= e_k}, {@link
 * MoeReference#combineBound} applied to the y_k, whose magnitudes are at most |Y_k| + e_k, plus the
 * distance {@code sum_k |a_k| e_k} between the sum of the y_k and the exact {@code sum_k a_k Y_k}:
 * <pre>
 *   |out - ref| &lt;= 2^-8 |ref| + (1 + 2^-8) (1.01 topK 2^-24 sum_k |a_k| (|Y_k| + e_k) + sum_k |a_k| e_k) + 2^-133
 * </pre>
 * (2^-8 |sum_k a_k y_k| is at most 2^-8 (|ref| + sum_k |a_k| e_k), which the factor 1 + 2^-8 on
 * the last sum covers), plus the double reference's own error.
 */
final class MoeExpertReference {
    private MoeExpertReference() {}

    /** One expert output row in double: {@code y[c] = sum_h x[xAt + h] w[(wRow + c) * k + h]} and the sums of |terms|. */
    record Row(double[] y, double[] abs) {}

    /** Row {@code c = 0 .. n-1} of {@code x W^T} for a token row at {@code xAt} and an expert whose weight rows start at {@code wRow}. */
    static Row row(float[] x, int xAt, float[] w, int wRow, int n, int k) {
        double[] y = new double[n];
        double[] abs = new double[n];
        for (int c = 0; c < n; c++) {
            int at = (wRow + c) * k;
            double s = 0;
            double a = 0;
            for (int h = 0; h < k; h++) {
                double p = (double) x[xAt + h] * w[at + h];
                s += p;
                a += Math.abs(p);
            }
            y[c] = s;
            abs[c] = a;
        }
        return new Row(y, abs);
    }

    /** |y - Y| allowed for one bf16 expert output element of K = {@code k} products. */
    static double gemmBound(int k, double exact, double absSum) {
        return GemmErrorBound.element(DType.BF16, k, exact, absSum, 0) + GemmErrorBound.referenceError(k, absSum);
    }

    /** Accumulates one token element of the layer: the exact sum, and what its bound needs. */
    static final class LayerElement {
        private double ref;
        private double absTerms;  // sum_k |a_k| (|Y_k| + e_k)
        private double gemmErrors;  // sum_k |a_k| e_k

        /** Route k's term: routing weight {@code a}, exact expert output {@code y} of {@code k} products, their |terms| {@code abs}. */
        void add(double a, double y, double abs, int k) {
            double e = gemmBound(k, y, abs);
            ref += a * y;
            absTerms += Math.abs(a) * (Math.abs(y) + e);
            gemmErrors += Math.abs(a) * e;
        }

        double ref() {
            return ref;
        }

        /** The bound of the class comment for {@code topK} routes, with the double sum's own error (2^-50 of the terms). */
        double bound(int topK) {
            double u = 0x1p-8;
            return u * Math.abs(ref) + (1 + u) * (1.01 * topK * 0x1p-24 * absTerms + gemmErrors) + 0x1p-133 + 0x1p-50 * absTerms;
        }
    }
}

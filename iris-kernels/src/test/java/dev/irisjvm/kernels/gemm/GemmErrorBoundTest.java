package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The GPU tests' error bound, checked on the host: simulated kernels (F32 accumulation in any
 * order, rounding or truncating, in blocks, the bias last, one rounding to the output) always stay
 * within it; a result that lost one product does not.
 */
class GemmErrorBoundTest {
    private static final DType[] OUTPUTS = {DType.BF16, DType.F16, DType.F32};

    /** F32 rounding of x toward zero: what a truncating adder returns. */
    private static float truncate(double x) {
        float f = (float) x;
        return Math.abs(f) > Math.abs(x) ? Math.nextAfter(f, 0.0) : f;
    }

    /** One simulated dot product: products exact in F32, summed in blocks of {@code block}, then the bias. */
    private static float accumulate(float[] a, float[] b, float bias, int[] order, int block, boolean truncating) {
        float total = 0;
        for (int start = 0; start < order.length; start += block) {
            float part = 0;
            for (int t = start; t < Math.min(order.length, start + block); t++) {
                float p = a[order[t]] * b[order[t]];  // exact: at most 22 significant bits
                part = truncating ? truncate((double) part + p) : part + p;
            }
            total = truncating ? truncate((double) total + part) : total + part;
        }
        return truncating ? truncate((double) total + bias) : total + bias;
    }

    private static int[] shuffled(int k, Random r) {
        int[] order = new int[k];
        for (int i = 0; i < k; i++) order[i] = i;
        for (int i = k - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    @Test
    void simulatedKernelsStayWithinTheBound() {
        Random r = new Random(7);
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (int k : new int[] {8, 72, 520, 1000, 4096}) {
                for (int trial = 0; trial < 40; trial++) {
                    float[] a = new float[k];
                    float[] b = new float[k];
                    for (int i = 0; i < k; i++) {
                        a[i] = GemmReference.representable(in, r.nextFloat() * 2 - 1);
                        b[i] = GemmReference.representable(in, r.nextFloat() * 2 - 1);
                    }
                    float bias = trial % 2 == 0 ? 0f : GemmReference.representable(in, r.nextFloat() * 2 - 1);
                    double sum = bias;
                    double abs = 0;
                    for (int i = 0; i < k; i++) {
                        sum += (double) a[i] * b[i];
                        abs += Math.abs((double) a[i] * b[i]);
                    }
                    final double exact = sum;
                    final double absSum = abs;
                    int[] order = trial % 3 == 0 ? shuffled(k, r) : java.util.stream.IntStream.range(0, k).toArray();
                    for (boolean truncating : new boolean[] {false, true}) {
                        for (int block : new int[] {1, 16, 64, k}) {
                            float acc = accumulate(a, b, bias, order, block, truncating);
                            for (DType out : OUTPUTS) {
                                double c = GemmReference.representable(out, acc);
                                double bound = GemmErrorBound.element(out, k, exact, absSum, Math.abs(bias));
                                assertTrue(Math.abs(c - exact) <= bound, () -> in + " -> " + out + " K " + k + ": |" + c + " - "
                                        + exact + "| > " + bound);
                            }
                        }
                    }
                }
            }
        }
    }

    /**
     * C = alpha A B + beta C0 + bias as the kernel's epilogue forms it in F32 (alpha times the sum
     * and beta C0, fused or not, then the bias), rounded once to the output: within {@link
     * GemmErrorBound#scaled} for any alpha and beta, C0 of the output's dtype.
     */
    @Test
    void simulatedScaledEpiloguesStayWithinTheScaledBound() {
        Random r = new Random(13);
        float[][] scales = {{1f, 0f}, {0.5f, 0f}, {1f, 1f}, {-3f, 0.25f}, {0.125f, -2f}, {7f, 1f}};
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (int k : new int[] {8, 520, 4096}) {
                for (int trial = 0; trial < 30; trial++) {
                    float[] a = new float[k];
                    float[] b = new float[k];
                    double product = 0;
                    double abs = 0;
                    for (int i = 0; i < k; i++) {
                        a[i] = GemmReference.representable(in, r.nextFloat() * 2 - 1);
                        b[i] = GemmReference.representable(in, r.nextFloat() * 2 - 1);
                        product += (double) a[i] * b[i];
                        abs += Math.abs((double) a[i] * b[i]);
                    }
                    float bias = trial % 2 == 0 ? 0f : GemmReference.representable(in, r.nextFloat() * 2 - 1);
                    int[] order = trial % 3 == 0 ? shuffled(k, r) : java.util.stream.IntStream.range(0, k).toArray();
                    for (boolean truncating : new boolean[] {false, true}) {
                        float acc = accumulate(a, b, 0f, order, 64, truncating);
                        for (DType out : OUTPUTS) {
                            float c0 = GemmReference.representable(out, r.nextFloat() * 8 - 4);
                            for (float[] ab : scales) {
                                float alpha = ab[0];
                                float beta = ab[1];
                                for (boolean fused : new boolean[] {false, true}) {
                                    float scaled = fused ? Math.fma(alpha, acc, beta * c0) : alpha * acc + beta * c0;
                                    float sum = scaled + bias;
                                    double c = GemmReference.representable(out, sum);
                                    double exact = alpha * product + (double) beta * c0 + bias;
                                    double bound = GemmErrorBound.scaled(out, k, exact, abs, alpha,
                                            Math.abs((double) beta * c0) + Math.abs(bias));
                                    assertTrue(Math.abs(c - exact) <= bound, () -> in + " -> " + out + " K " + k + " alpha " + alpha
                                            + " beta " + beta + ": |" + c + " - " + exact + "| > " + bound);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void theScaledBoundScalesWithAlphaAndCountsTwoMoreTerms() {
        double u = DType.BF16.unitRoundoff();
        double eta = DType.BF16.halfSmallestSubnormal();
        double plain = GemmErrorBound.scaled(DType.BF16, 100, 3.0, 10.0, 1.0, 0.5);
        assertEquals(u * 3.0 + (1 + u) * 102 * 0x1p-22 * 10.5 + eta, plain, 1e-18);
        double doubled = GemmErrorBound.scaled(DType.BF16, 100, 3.0, 10.0, -2.0, 0.5);
        assertEquals(u * 3.0 + (1 + u) * 102 * 0x1p-22 * 20.5 + eta, doubled, 1e-18);
        assertTrue(plain >= GemmErrorBound.element(DType.BF16, 100, 3.0, 10.0, 0.5), "never tighter than the one-rounding bound");
    }

    @Test
    void aLostProductIsCaught() {
        Random r = new Random(11);
        int k = 72;
        int caught = 0;
        for (int trial = 0; trial < 100; trial++) {
            float[] a = new float[k];
            float[] b = new float[k];
            double exact = 0;
            double absSum = 0;
            int largest = 0;
            for (int i = 0; i < k; i++) {
                a[i] = GemmReference.representable(DType.BF16, r.nextFloat() * 2 - 1);
                b[i] = GemmReference.representable(DType.BF16, r.nextFloat() * 2 - 1);
                exact += (double) a[i] * b[i];
                absSum += Math.abs((double) a[i] * b[i]);
                if (Math.abs(a[i] * b[i]) > Math.abs(a[largest] * b[largest])) largest = i;
            }
            double wrong = GemmReference.representable(DType.BF16, (float) (exact - (double) a[largest] * b[largest]));
            if (Math.abs(wrong - exact) > GemmErrorBound.element(DType.BF16, k, exact, absSum, 0)) caught++;
        }
        assertEquals(100, caught, "dropping the largest of 72 products must always exceed the bound");
    }

    @Test
    void twoHonestImplementationsStayWithinThePairBound() {
        Random r = new Random(5);
        int k = 2048;
        for (int trial = 0; trial < 50; trial++) {
            float[] a = new float[k];
            float[] b = new float[k];
            double absSum = 0;
            for (int i = 0; i < k; i++) {
                a[i] = GemmReference.representable(DType.BF16, r.nextFloat() * 2 - 1);
                b[i] = GemmReference.representable(DType.BF16, r.nextFloat() * 2 - 1);
                absSum += Math.abs((double) a[i] * b[i]);
            }
            int[] order = shuffled(k, r);
            float mine = accumulate(a, b, 0f, order, 64, true);
            float theirs = accumulate(a, b, 0f, java.util.stream.IntStream.range(0, k).toArray(), k, false);
            // The F32 |A||B| GEMM as cuBLAS would give it: summed in F32, so at most K 2^-22 S low.
            float absSumF32 = 0;
            for (int i = 0; i < k; i++) absSumF32 += Math.abs(a[i] * b[i]);
            double upper = GemmErrorBound.absSumUpper(k, absSumF32);
            assertTrue(upper >= absSum, "the upper bound of S is one");
            for (DType out : OUTPUTS) {
                double c = GemmReference.representable(out, mine);
                double o = GemmReference.representable(out, theirs);
                assertTrue(Math.abs(c - o) <= GemmErrorBound.pairBound(out, k, o, upper, 0), out + ": " + c + " vs " + o);
            }
        }
    }

    @Test
    void termsAndLimits() {
        assertEquals(0x1p-22, GemmErrorBound.ACCUMULATION_UNIT);
        assertEquals(1000 * 0x1p-22 * 12.5, GemmErrorBound.accumulation(1000, 12, 0.5));
        // u_out |ref| dominates a short sum into BF16.
        double bound = GemmErrorBound.element(DType.BF16, 8, 2.0, 2.0, 0);
        assertTrue(bound > 2 * 0x1p-8 && bound < 2 * 0x1p-8 * 1.01, "bound " + bound);
        assertFalse(GemmErrorBound.element(DType.F32, 8, 2.0, 2.0, 0) > 1e-5);
        assertThrows(IllegalArgumentException.class, () -> GemmErrorBound.absSumUpper(1 << 22, 1.0));
    }
}

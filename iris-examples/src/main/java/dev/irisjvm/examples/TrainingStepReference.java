package dev.irisjvm.examples;

import static dev.irisjvm.examples.Example11TrainingStep.FFN_PER_RANK;
import static dev.irisjvm.examples.Example11TrainingStep.HIDDEN;
import static dev.irisjvm.examples.Example11TrainingStep.LEARNING_RATE;
import static dev.irisjvm.examples.Example11TrainingStep.TOKENS_PER_RANK;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.stream.IntStream;

/**
 * Example 11's check: after every step, every tensor the step wrote against a double-precision
 * computation of that stage from the inputs the device gave it (its own outputs of the stages
 * before, downloaded; the peers' shards through the rendezvous), element by element. Each stage
 * is thus held to the bound of its own roundings, rather than to a bound carried through the
 * whole step, which worst-case analysis would make too loose to catch a wrong layout:
 * <ul>
 * <li>a GEMM's BF16 output: {@link GemmErrorBound#element} (F32 accumulation, one rounding);</li>
 * <li>a reduce-scatter's output: every rank's partial within its GEMM bound, plus the w - 1
 *     additions of the partials, each in F32 and rounded to BF16: {@code E + (w - 1) ((u + 2^-24)
 *     Mag + eta)}, E the partials' bounds summed, Mag their magnitudes plus bounds summed;</li>
 * <li>a weight gradient (F32, beta = 1 onto zero): {@link GemmErrorBound#scaled};</li>
 * <li>an elementwise kernel: its F32 evaluation, at most four correctly rounded operations and an
 *     {@code expf} (at most 2 ulp in CUDA) on each path, stays within 2^{@value #F32_EVALUATION_LOG2}
 *     of the magnitudes it combines ({@code |ref|}; for SiLU' times da, {@code |da| (1 + 2 |h|)},
 *     which bounds {@code |da| s (1 + |h| e s)} term by term), then one rounding to BF16
 *     ({@code u |ref| + eta} more);</li>
 * <li>the loss: n squares summed in F32 in any order, within {@code (n + 4) 2^-23} of their sum;</li>
 * <li>SGD: one fused multiply-add, {@code 2^-24 |ref|}; the BF16 working copy bit for bit.</li>
 * </ul>
 * The device's gathered x and dy must equal every rank's rows bit for bit.
 */
final class TrainingStepReference {
    /** log2 of the relative error of an elementwise kernel's F32 evaluation (see the class comment). */
    static final int F32_EVALUATION_LOG2 = -19;
    private static final double F32_EVALUATION = Math.scalb(1.0, F32_EVALUATION_LOG2);
    private static final double U = DType.BF16.unitRoundoff();
    private static final double ETA = DType.BF16.halfSmallestSubnormal();

    private final Iris iris;
    private final Example11TrainingStep mlp;
    private final int rank;
    private final int world;
    private final int tokens;
    /** The gathered input and this rank's target, as the device holds them (BF16). */
    private final double[] x;
    private final double[] target;
    /** This rank's weights before the next step: F32 masters and BF16 working copies, as downloaded. */
    private double[] w1;
    private double[] w2;
    private double[] w1Bf16;
    private double[] w2Bf16;

    /** Collective: checks the initial working copies (BF16 casts of the masters) and remembers them. */
    TrainingStepReference(Iris iris, Example11TrainingStep mlp, long seed) {
        this.iris = iris;
        this.mlp = mlp;
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.tokens = mlp.tokens;
        double[] all = new double[tokens * HIDDEN];
        for (int r = 0; r < world; r++) {
            System.arraycopy(bf16(Example11TrainingStep.input(seed, r)), 0, all, r * TOKENS_PER_RANK * HIDDEN,
                    TOKENS_PER_RANK * HIDDEN);
        }
        x = all;
        target = bf16(Example11TrainingStep.target(seed, rank));
        w1 = download(mlp.w1);
        w2 = download(mlp.w2);
        w1Bf16 = download(mlp.w1Bf16);
        w2Bf16 = download(mlp.w2Bf16);
        equal("the initial BF16 copy of W1", w1Bf16, bf16(w1));
        equal("the initial BF16 copy of W2", w2Bf16, bf16(w2));
    }

    /** Collective: checks everything step {@code step} wrote; returns the loss (the mean over every rank's rows). */
    double check(int step) {
        iris.synchronize();
        String at = "step " + step + ": ";
        double[] h = download(mlp.h);
        double[] a = download(mlp.a);
        double[] y = download(mlp.y);
        double[] dy = download(mlp.dy);
        double[] da = download(mlp.da);
        double[] dh = download(mlp.dh);
        double[] myDy = rows(dy, rank, HIDDEN);
        double myLoss = download(mlp.loss)[0];
        Shard[] shards = exchange(new Shard(a, dh, myDy, w1Bf16, w2Bf16, myLoss));

        equal(at + "the gathered x", download(mlp.x), x);
        Product ph = product(x, false, w1Bf16, true, tokens, FFN_PER_RANK, HIDDEN);
        within(at + "h = gather(x) W1^T", mlp.h, ph.sum, gemmBounds(ph, HIDDEN));
        within(at + "a = SiLU(h)", mlp.a, silu(h), elementwiseBounds(silu(h)));

        double[][] yParts = new double[2][];
        reduced(shards, s -> rows(s.a, rank, FFN_PER_RANK), s -> s.w2Bf16, true, HIDDEN, yParts);
        within(at + "y = reduce-scatter(a W2^T)", mlp.y, yParts[0], yParts[1]);

        double scale = 1.0 / ((double) tokens * HIDDEN);
        double loss = 0;
        double[] dyRef = new double[y.length];
        for (int i = 0; i < y.length; i++) {
            double d = y[i] - target[i];
            loss += 0.5 * scale * d * d;
            dyRef[i] = scale * d;
        }
        within(at + "this rank's loss", mlp.loss, new double[] {loss}, new double[] {(y.length + 4) * 0x1p-23 * loss});
        within(at + "dy = (y - target) / (tokens x hidden)", myDy, dyRef, elementwiseBounds(dyRef));
        for (int r = 0; r < world; r++) {
            equal(at + "rank " + r + "'s rows of the gathered dy", rows(dy, r, HIDDEN), shards[r].dy);
        }

        Product pda = product(dy, false, w2Bf16, false, tokens, FFN_PER_RANK, HIDDEN);
        within(at + "da = gather(dy) W2", mlp.da, pda.sum, gemmBounds(pda, HIDDEN));
        Product pdw2 = product(dy, true, a, false, HIDDEN, FFN_PER_RANK, tokens);
        double[] dw2 = download(mlp.dw2);
        within(at + "dW2 = gather(dy)^T a", dw2, pdw2.sum, gradientBounds(pdw2, tokens));

        double[] dhRef = new double[dh.length];
        double[] dhBound = new double[dh.length];
        for (int i = 0; i < dh.length; i++) {
            dhRef[i] = da[i] * siluDerivative(h[i]);
            dhBound[i] = U * Math.abs(dhRef[i]) + (1 + U) * F32_EVALUATION * Math.abs(da[i]) * (1 + 2 * Math.abs(h[i])) + ETA;
        }
        within(at + "dh = da SiLU'(h)", mlp.dh, dhRef, dhBound);

        double[][] dxParts = new double[2][];
        reduced(shards, s -> rows(s.dh, rank, FFN_PER_RANK), s -> s.w1Bf16, false, FFN_PER_RANK, dxParts);
        within(at + "dx = reduce-scatter(dh W1)", mlp.dx, dxParts[0], dxParts[1]);
        Product pdw1 = product(dh, true, x, false, FFN_PER_RANK, HIDDEN, tokens);
        double[] dw1 = download(mlp.dw1);
        within(at + "dW1 = dh^T gather(x)", dw1, pdw1.sum, gradientBounds(pdw1, tokens));

        w1 = update(at + "W1", w1, dw1, mlp.w1, mlp.w1Bf16);
        w2 = update(at + "W2", w2, dw2, mlp.w2, mlp.w2Bf16);
        w1Bf16 = bf16(w1);
        w2Bf16 = bf16(w2);

        double total = 0;
        for (Shard s : shards) {
            total += s.loss;
        }
        return total;
    }

    /** Checks the SGD update of one weight (F32 master, BF16 copy) and returns the new master as downloaded. */
    private double[] update(String what, double[] before, double[] grad, SymTensor master, SymTensor working) {
        double[] ref = new double[before.length];
        double[] bound = new double[before.length];
        for (int i = 0; i < ref.length; i++) {
            ref[i] = before[i] - (double) LEARNING_RATE * grad[i];
            bound[i] = 0x1p-24 * Math.abs(ref[i]) + DType.F32.halfSmallestSubnormal();
        }
        within(what + " -= lr dW (F32 master)", master, ref, bound);
        double[] after = download(master);
        equal(what + "'s BF16 working copy", download(working), bf16(after));
        return after;
    }

    // ---- the reduce-scatters -------------------------------------------------------------------------

    private interface Part {
        double[] of(Shard s);
    }

    /**
     * This rank's rows of {@code sum_r A_r B_r} (B_r stored N x K when {@code nk}, else K x N), with
     * each element's bound: {@code out[0]} the values, {@code out[1]} the bounds.
     */
    private void reduced(Shard[] shards, Part a, Part b, boolean nk, int k, double[][] out) {
        int n = HIDDEN;
        double[] sum = new double[TOKENS_PER_RANK * n];
        double[] errors = new double[sum.length];
        double[] magnitude = new double[sum.length];
        for (Shard s : shards) {
            Product p = product(a.of(s), false, b.of(s), nk, TOKENS_PER_RANK, n, k);
            double[] e = gemmBounds(p, k);
            for (int i = 0; i < sum.length; i++) {
                sum[i] += p.sum[i];
                errors[i] += e[i];
                magnitude[i] += Math.abs(p.sum[i]) + e[i];
            }
        }
        double[] bound = new double[sum.length];
        for (int i = 0; i < sum.length; i++) {
            bound[i] = errors[i] + (world - 1) * ((U + 0x1p-24) * magnitude[i] + ETA);
        }
        out[0] = sum;
        out[1] = bound;
    }

    // ---- the products and their bounds ---------------------------------------------------------------

    /** {@code sum} and {@code abs} (S = sum |a b|) of an m x n product. */
    private record Product(double[] sum, double[] abs) {}

    /**
     * {@code C = A B}, m x n: A stored m x k, or k x m when {@code aKm}; B stored k x n, or n x k
     * when {@code bNk}. Products of BF16 values are exact in double.
     */
    private static Product product(double[] a, boolean aKm, double[] b, boolean bNk, int m, int n, int k) {
        double[] at = new double[m * k];   // A(i, kk) at at[i * k + kk]
        double[] bt = new double[n * k];   // B(kk, j) at bt[j * k + kk]
        for (int i = 0; i < m; i++) {
            for (int kk = 0; kk < k; kk++) {
                at[i * k + kk] = aKm ? a[kk * m + i] : a[i * k + kk];
            }
        }
        for (int j = 0; j < n; j++) {
            for (int kk = 0; kk < k; kk++) {
                bt[j * k + kk] = bNk ? b[j * k + kk] : b[kk * n + j];
            }
        }
        double[] sum = new double[m * n];
        double[] abs = new double[m * n];
        IntStream.range(0, m).parallel().forEach(i -> {
            for (int j = 0; j < n; j++) {
                double s = 0;
                double sa = 0;
                for (int kk = 0; kk < k; kk++) {
                    double p = at[i * k + kk] * bt[j * k + kk];
                    s += p;
                    sa += Math.abs(p);
                }
                sum[i * n + j] = s;
                abs[i * n + j] = sa;
            }
        });
        return new Product(sum, abs);
    }

    /** A BF16 GEMM output: F32 accumulation of k products, one rounding; and the reference's own error. */
    private static double[] gemmBounds(Product p, int k) {
        double[] bound = new double[p.sum.length];
        for (int i = 0; i < bound.length; i++) {
            bound[i] = GemmErrorBound.element(DType.BF16, k, p.sum[i], p.abs[i], 0) + GemmErrorBound.referenceError(k, p.abs[i]);
        }
        return bound;
    }

    /** An F32 weight gradient, alpha = 1 and beta = 1 onto zeros. */
    private static double[] gradientBounds(Product p, int k) {
        double[] bound = new double[p.sum.length];
        for (int i = 0; i < bound.length; i++) {
            bound[i] = GemmErrorBound.scaled(DType.F32, k, p.sum[i], p.abs[i], 1, 0) + GemmErrorBound.referenceError(k + 2L, p.abs[i]);
        }
        return bound;
    }

    /** An elementwise result rounded once to BF16 after its F32 evaluation. */
    private static double[] elementwiseBounds(double[] ref) {
        double[] bound = new double[ref.length];
        for (int i = 0; i < ref.length; i++) {
            bound[i] = (U + (1 + U) * F32_EVALUATION) * Math.abs(ref[i]) + ETA;
        }
        return bound;
    }

    private static double[] silu(double[] h) {
        double[] a = new double[h.length];
        for (int i = 0; i < h.length; i++) {
            a[i] = h[i] / (1 + Math.exp(-h[i]));
        }
        return a;
    }

    private static double siluDerivative(double h) {
        double s = 1 / (1 + Math.exp(-h));
        return s * (1 + h * (1 - s));
    }

    // ---- the peers' shards ---------------------------------------------------------------------------

    /**
     * What the reference of a reduce-scatter and of the gathered dy needs from every rank; every value
     * is a float (BF16 or F32 on the device), so it travels as one.
     */
    private record Shard(double[] a, double[] dh, double[] dy, double[] w1Bf16, double[] w2Bf16, double loss) {
        private double[][] parts() {
            return new double[][] {a, dh, dy, w1Bf16, w2Bf16, {loss}};
        }

        byte[] bytes() {
            int floats = 0;
            for (double[] part : parts()) {
                floats += part.length;
            }
            ByteBuffer b = ByteBuffer.allocate(4 * floats).order(ByteOrder.LITTLE_ENDIAN);
            for (double[] part : parts()) {
                for (double v : part) {
                    b.putFloat((float) v);
                }
            }
            return b.array();
        }

        /** A peer's shard, of the same shapes as {@code shape}. */
        static Shard of(byte[] bytes, Shard shape) {
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            double[][] like = shape.parts();
            double[][] parts = new double[like.length][];
            for (int i = 0; i < parts.length; i++) {
                parts[i] = new double[like[i].length];
                for (int j = 0; j < parts[i].length; j++) {
                    parts[i][j] = b.getFloat();
                }
            }
            return new Shard(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5][0]);
        }
    }

    /** Collective: every rank's shard, through the rendezvous (small: this is a check, not the data path). */
    private Shard[] exchange(Shard mine) {
        byte[][] all = iris.allGather(mine.bytes());
        Shard[] shards = new Shard[all.length];
        for (int r = 0; r < all.length; r++) {
            shards[r] = Shard.of(all[r], mine);
        }
        return shards;
    }

    // ---- small helpers -------------------------------------------------------------------------------

    /** Rows [r TOKENS_PER_RANK, (r + 1) TOKENS_PER_RANK) of a tokens x cols matrix: rank r's tokens. */
    private static double[] rows(double[] m, int r, int cols) {
        double[] out = new double[TOKENS_PER_RANK * cols];
        System.arraycopy(m, r * TOKENS_PER_RANK * cols, out, 0, out.length);
        return out;
    }

    private static double[] download(SymTensor t) {
        return t.toDoubleArray();
    }

    /** The values rounded to BF16 (to nearest even), as the device rounds them. */
    private static double[] bf16(float[] values) {
        double[] out = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(values[i]));
        }
        return out;
    }

    /** Doubles that are floats (an F32 master), rounded to BF16. */
    private static double[] bf16(double[] floats) {
        double[] out = new double[floats.length];
        for (int i = 0; i < floats.length; i++) {
            out[i] = HalfFloats.bf16ToFloat(HalfFloats.floatToBf16((float) floats[i]));
        }
        return out;
    }

    private void within(String what, SymTensor got, double[] expected, double[] bound) {
        within(what, download(got), expected, bound);
    }

    /** Every element within its bound (NaN, what the outputs start as, never is). */
    private void within(String what, double[] got, double[] expected, double[] bound) {
        for (int i = 0; i < expected.length; i++) {
            if (!(Math.abs(got[i] - expected[i]) <= bound[i])) {
                throw new IllegalStateException("rank " + rank + ": " + what + ": element " + i + " is " + got[i] + ", expected "
                        + expected[i] + " within " + bound[i]);
            }
        }
    }

    /** Bit for bit (as doubles; NaN never equals). */
    private void equal(String what, double[] got, double[] expected) {
        within(what, got, expected, new double[expected.length]);
    }
}

package dev.irisjvm.bench.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.ReduceOp;

/**
 * How far an output may be from its reference, element by element. Pure: unit-tested without a GPU.
 *
 * <p>Inputs are uniform in [-1, 1), so per element S = Σ|x_p| ≤ W and the exact result E satisfies
 * |E| ≤ W for SUM and ≤ 1 for AVG. u is the unit roundoff of the type (bf16 2^-8, f16 2^-11, f32
 * 2^-24), uf = 2^-24 (float accumulation), tiny = half the type's smallest subnormal, s = 1 for
 * SUM and 1/W for AVG. Each implementation errs from E by at most:
 *
 * <ul>
 *   <li>rounded once (iris ONE_SHOT, TWO_SHOT, AUTO, reduce-scatter; the host reference): u|E| + W uf S + tiny;</li>
 *   <li>rounded at every step (iris RING, ATOMIC): (W-1) u S s + u|E| + W uf S + W tiny;</li>
 *   <li>NCCL (any order, partial sums rounded to the type, AVG pre-multiplied): W u S s + u|E| + W uf S + W tiny;</li>
 * </ul>
 *
 * and an output passes when |output - reference| ≤ its bound + the reference's bound (with S and
 * |E| at their maxima). Exact (bound 0, compared as numbers so that -0 equals +0) for MAX and MIN,
 * and for SUM on two ranks: every implementation rounds the one sum a + b once (float has more than
 * 2p + 2 bits, so rounding through float equals rounding directly). Data movement (all-gather,
 * all-to-all, broadcast) must match bit for bit.
 *
 * <pre>{@code
 * Tolerance.bound(ReduceOp.SUM, DType.BF16, 2, Rounding.ONCE, Rounding.NCCL);   // 0.0
 * Tolerance.bound(ReduceOp.SUM, DType.BF16, 4, Rounding.ONCE, Rounding.NCCL);   // about 0.094
 * }</pre>
 */
public final class Tolerance {
    static final double UF = 0x1p-24;

    /** How an implementation rounds a reduction. */
    public enum Rounding {
        ONCE("rounded once"),
        EVERY_STEP("rounded at every step"),
        NCCL("NCCL");

        private final String text;

        Rounding(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    private Tolerance() {}

    /** How an iris all-reduce algorithm rounds (AUTO resolves to ONE_SHOT or TWO_SHOT). */
    public static Rounding of(AllReduceAlgorithm a) {
        return a == AllReduceAlgorithm.RING || a == AllReduceAlgorithm.ATOMIC ? Rounding.EVERY_STEP : Rounding.ONCE;
    }

    /** The largest allowed |output - reference| of a reduction; 0 means exact. */
    public static double bound(ReduceOp op, DType t, int world, Rounding output, Rounding reference) {
        if (world < 1) {
            throw new IllegalArgumentException("world must be >= 1, got " + world);
        }
        if (op == ReduceOp.MAX || op == ReduceOp.MIN || world == 1 || (op == ReduceOp.SUM && world == 2)) {
            return 0.0;
        }
        return error(op, t, world, output) + error(op, t, world, reference);
    }

    /** The largest error from the exact result of one implementation. */
    static double error(ReduceOp op, DType t, int world, Rounding r) {
        double u = t.unitRoundoff();
        double w = world;
        double s = w;                                   // Σ|x| with |x| ≤ 1
        double e = op == ReduceOp.AVG ? 1.0 : w;        // |exact|
        double scale = op == ReduceOp.AVG ? 1.0 / w : 1.0;
        double base = u * e + w * UF * s;
        return switch (r) {
            case ONCE -> base + t.halfSmallestSubnormal();
            case EVERY_STEP -> (w - 1) * u * s * scale + base + w * t.halfSmallestSubnormal();
            case NCCL -> w * u * s * scale + base + w * t.halfSmallestSubnormal();
        };
    }
}

package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import java.util.function.DoubleBinaryOperator;

/**
 * The CPU reference of the reductions, in double precision, and the error bounds the results are
 * held to. Pure: unit-tested without a GPU ({@code CclReferenceTest}); the GPU scenarios use it.
 *
 * <p>Notation per element: x_p the ranks' inputs (exactly representable in T), exact = the
 * reduction in double (sum, sum / W, max, min), S = sum of |x_p|, W the world size, u the unit
 * roundoff of T (bf16 2^-8, f16 2^-11, f32 2^-24), uf = 2^-24 (float accumulation), tiny = half
 * the smallest subnormal of T (the absolute error of a rounding near zero).
 *
 * <ul>
 * <li>MAX, MIN: exact, every algorithm (the result is one of the inputs; nothing rounds).</li>
 * <li>SUM rounded once (ONE_SHOT, TWO_SHOT, reduce-scatter): float accumulation of W terms errs by
 *     at most (W-1) uf S, the one rounding to T by u |exact| plus that error again, so
 *     |got - exact| <= u |exact| + W uf S + tiny.</li>
 * <li>AVG rounded once: the same sum, times 1/W in float (two more float roundings, the sum's error
 *     divided by W): |got - exact| <= u |exact| + 3 uf S + tiny.</li>
 * <li>Rounded at every step (RING: partial sums stored as T after each hop; ATOMIC: every
 *     addition rounds in T): each of the W-1 partial sums errs by at most u S, so
 *     |got - exact| <= (W-1) u S + u |exact| + W uf S + W tiny, for SUM and AVG (scaling by 1/W only
 *     shrinks the error of the sum).</li>
 * <li>NCCL: may reduce in any order and round partials to T at every step, and pre-multiplies each
 *     input by 1/W for AVG (one more rounding per input), so |nccl - exact| <= W u S + u |exact|
 *     + W uf S + W tiny. Where both reduce two values once in float (SUM on two ranks) and for MAX
 *     and MIN, the results must agree bit for bit; otherwise |got - nccl| <= our bound + NCCL's.</li>
 * </ul>
 */
final class CclReference {
    static final double UF = 0x1p-24;

    private CclReference() {}

    /** How an all-reduce algorithm rounds. */
    enum Rounding { ONCE, EVERY_STEP }

    static Rounding rounding(AllReduceAlgorithm a) {
        return a == AllReduceAlgorithm.RING || a == AllReduceAlgorithm.ATOMIC ? Rounding.EVERY_STEP : Rounding.ONCE;
    }

    /** Bound on |result - exact| of our kernels (see the class comment). */
    static double bound(ReduceOp op, Rounding r, DType t, int world, double exact, double absSum) {
        if (op == ReduceOp.MAX || op == ReduceOp.MIN) return 0;
        double u = t.unitRoundoff();
        double e = Math.abs(exact);
        if (r == Rounding.EVERY_STEP) {
            return (world - 1) * u * absSum + u * e + world * UF * absSum + world * t.halfSmallestSubnormal();
        }
        return op == ReduceOp.AVG ? u * e + 3 * UF * absSum + t.halfSmallestSubnormal() : u * e + world * UF * absSum + t.halfSmallestSubnormal();
    }

    /** Bound on |NCCL - exact|. */
    static double ncclBound(ReduceOp op, DType t, int world, double exact, double absSum) {
        if (op == ReduceOp.MAX || op == ReduceOp.MIN) return 0;
        double u = t.unitRoundoff();
        return world * u * absSum + u * Math.abs(exact) + world * UF * absSum + world * t.halfSmallestSubnormal();
    }

    /** Where our result must equal NCCL's bit for bit. */
    static boolean exactVsNccl(ReduceOp op, int world) {
        return op == ReduceOp.MAX || op == ReduceOp.MIN || (op == ReduceOp.SUM && world == 2);
    }

    /** The double-precision reduction of the ranks' inputs, element by element. */
    static final class Accumulator {
        private final ReduceOp op;
        private final double[] acc;
        private final double[] abs;
        private int added;

        Accumulator(ReduceOp op, int n) {
            this.op = op;
            this.acc = new double[n];
            this.abs = op == ReduceOp.SUM || op == ReduceOp.AVG ? new double[n] : null;
        }

        /** Adds one rank's input (elements [from, from + acc.length) of x). */
        void add(float[] x, int from) {
            for (int i = 0; i < acc.length; i++) {
                double v = x[from + i];
                if (added == 0) {
                    acc[i] = v;
                } else {
                    acc[i] = switch (op) {
                        case SUM, AVG -> acc[i] + v;
                        case MAX -> Math.max(acc[i], v);
                        case MIN -> Math.min(acc[i], v);
                    };
                }
                if (abs != null) abs[i] += Math.abs(v);
            }
            added++;
        }

        void add(float[] x) {
            add(x, 0);
        }

        int length() {
            return acc.length;
        }

        int added() {
            return added;
        }

        double exact(int i) {
            return op == ReduceOp.AVG ? acc[i] / added : acc[i];
        }

        double absSum(int i) {
            return abs == null ? Math.abs(acc[i]) : abs[i];
        }
    }

    /** Null when every |got[i] - exact| <= bound, else a description of the misses (NaN: unwritten, the poison). */
    static String check(String what, float[] got, Accumulator a, ReduceOp op, Rounding r, DType t) {
        return within(what, got, a, (exact, absSum) -> bound(op, r, t, a.added(), exact, absSum));
    }

    /** {@link #check} of an NCCL result (e.g. on window-registered buffers), held to NCCL's bound. */
    static String checkNccl(String what, float[] got, Accumulator a, ReduceOp op, DType t) {
        return within(what, got, a, (exact, absSum) -> ncclBound(op, t, a.added(), exact, absSum));
    }

    private static String within(String what, float[] got, Accumulator a, DoubleBinaryOperator boundOf) {
        if (got.length != a.length()) return what + ": " + got.length + " elements, expected " + a.length();
        long bad = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < got.length; i++) {
            double exact = a.exact(i);
            double b = boundOf.applyAsDouble(exact, a.absSum(i));
            double err = Math.abs(got[i] - exact);
            if (!(err <= b)) {
                if (bad < 3) {
                    first.append(bad == 0 ? "" : "; ").append("[").append(i).append("] ")
                            .append(Float.isNaN(got[i]) ? "NaN (unwritten?)" : Float.toString(got[i])).append(", expected ")
                            .append(exact).append(" +- ").append(b);
                }
                bad++;
            }
        }
        return bad == 0 ? null : what + ": " + bad + " of " + got.length + " elements outside the bound: " + first;
    }

    /** Null when got equals NCCL's result bit for bit (exact) or within our bound plus NCCL's. */
    static String checkVsNccl(String what, float[] got, float[] nccl, Accumulator a, ReduceOp op, Rounding r, DType t) {
        return againstNccl(what, got, nccl, a, op, t, (exact, absSum) -> bound(op, r, t, a.added(), exact, absSum));
    }

    /**
     * Two NCCL results on the same inputs (window-registered buffers against plain ones): bit for
     * bit where {@link #exactVsNccl}, else within twice NCCL's bound.
     */
    static String checkNcclVsNccl(String what, float[] got, float[] nccl, Accumulator a, ReduceOp op, DType t) {
        return againstNccl(what, got, nccl, a, op, t, (exact, absSum) -> ncclBound(op, t, a.added(), exact, absSum));
    }

    private static String againstNccl(String what, float[] got, float[] nccl, Accumulator a, ReduceOp op, DType t,
                                      DoubleBinaryOperator gotBound) {
        if (got.length != nccl.length) return what + ": " + got.length + " elements, NCCL " + nccl.length;
        int world = a.added();
        boolean exact = exactVsNccl(op, world);
        long bad = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < got.length; i++) {
            boolean ok;
            double allowed = 0;
            if (exact) {
                ok = Float.floatToRawIntBits(got[i]) == Float.floatToRawIntBits(nccl[i]) && !Float.isNaN(got[i]);
            } else {
                double e = a.exact(i);
                double s = a.absSum(i);
                allowed = gotBound.applyAsDouble(e, s) + ncclBound(op, t, world, e, s);
                ok = Math.abs((double) got[i] - nccl[i]) <= allowed;
            }
            if (!ok) {
                if (bad < 3) {
                    first.append(bad == 0 ? "" : "; ").append("[").append(i).append("] ").append(got[i]).append(" vs NCCL ")
                            .append(nccl[i]).append(exact ? " (must be bit-identical)" : " (allowed " + allowed + ")");
                }
                bad++;
            }
        }
        return bad == 0 ? null : what + " vs NCCL: " + bad + " of " + got.length + " elements differ: " + first;
    }

    /** Null when got equals expected bit for bit (data movement), else the first misses. */
    static String checkBits(String what, float[] got, int gotFrom, float[] expected, int expFrom, int count) {
        long bad = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < count; i++) {
            float g = got[gotFrom + i];
            float e = expected[expFrom + i];
            if (Float.floatToRawIntBits(g) != Float.floatToRawIntBits(e)) {
                if (bad < 3) {
                    first.append(bad == 0 ? "" : "; ").append("[").append(gotFrom + i).append("] ").append(g)
                            .append(Float.isNaN(g) ? " (poison: unwritten)" : "").append(", expected ").append(e);
                }
                bad++;
            }
        }
        return bad == 0 ? null : what + ": " + bad + " of " + count + " elements wrong: " + first;
    }
}

package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;

/**
 * The error bound of the hierarchical world all-reduce ({@link WorldCollectives}) on N nodes of L
 * ranks, in {@link CclReference}'s notation (exact, S = sum of |x_p| over the W = N L ranks, u the
 * unit roundoff of T, uf = 2^-24, tiny half T's smallest subnormal).
 *
 * <ul>
 * <li>Node level (reduce-scatter, rounded once): node n's result y_n errs by at most
 *     u |exact_n| + L uf S_n + tiny, and the node errors add up to at most u S + L uf S + N tiny.</li>
 * <li>Rail level (NCCL over the N values y_n, rounding at every step): at most N u sum|y_n| + u |exact|
 *     + N uf S + N tiny, with sum|y_n| <= S (1 + 2u).</li>
 * <li>SUM: |got - exact| <= (N + 2) u S + u |exact| + (L + N) uf S + 2 N tiny.</li>
 * <li>AVG: the node means and NCCL's 1/N pre-multiplication (one more rounding per value) scale
 *     the u terms by 1/W: |got - exact| <= (N + 2) u S / W + u |exact| + (N + 3) uf S + 2 N tiny.</li>
 * <li>MAX, MIN: exact (nothing rounds), and bit-identical to flat NCCL.</li>
 * </ul>
 * Against flat NCCL: |got - nccl| <= this bound + {@link CclReference#ncclBound} at world W.
 */
final class WorldReference {
    private WorldReference() {}

    static double bound(ReduceOp op, DType t, int nodes, int nodeSize, double exact, double absSum) {
        if (op == ReduceOp.MAX || op == ReduceOp.MIN) return 0;
        double u = t.unitRoundoff();
        double uf = CclReference.UF;
        double tiny = t.halfSmallestSubnormal();
        int world = nodes * nodeSize;
        if (op == ReduceOp.AVG) {
            return (nodes + 2) * u * absSum / world + u * Math.abs(exact) + (nodes + 3) * uf * absSum + 2 * nodes * tiny;
        }
        return (nodes + 2) * u * absSum + u * Math.abs(exact) + (nodeSize + nodes) * uf * absSum + 2 * nodes * tiny;
    }

    /** Null when every element is within the bound of the exact result, else the first misses. */
    static String check(String what, float[] got, CclReference.Accumulator a, ReduceOp op, DType t, int nodes, int nodeSize) {
        return compare(what, got, null, a, op, t, nodes, nodeSize);
    }

    /** Null when every element equals NCCL's (MAX, MIN) or is within both bounds of it. */
    static String checkVsNccl(String what, float[] got, float[] nccl, CclReference.Accumulator a, ReduceOp op, DType t,
                              int nodes, int nodeSize) {
        return compare(what, got, nccl, a, op, t, nodes, nodeSize);
    }

    private static String compare(String what, float[] got, float[] nccl, CclReference.Accumulator a, ReduceOp op, DType t,
                                  int nodes, int nodeSize) {
        if (got.length != a.length()) return what + ": " + got.length + " elements, expected " + a.length();
        long bad = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < got.length; i++) {
            double exact = a.exact(i);
            double s = a.absSum(i);
            double allowed = bound(op, t, nodes, nodeSize, exact, s);
            boolean ok;
            String against;
            if (nccl == null) {
                ok = Math.abs(got[i] - exact) <= allowed;
                against = "expected " + exact;
            } else if (allowed == 0) {
                ok = Float.floatToRawIntBits(got[i]) == Float.floatToRawIntBits(nccl[i]) && !Float.isNaN(got[i]);
                against = "NCCL " + nccl[i] + " (must be bit-identical)";
            } else {
                allowed += CclReference.ncclBound(op, t, nodes * nodeSize, exact, s);
                ok = Math.abs((double) got[i] - nccl[i]) <= allowed;
                against = "NCCL " + nccl[i];
            }
            if (!ok) {
                if (bad < 3) {
                    first.append(bad == 0 ? "" : "; ").append('[').append(i).append("] ")
                            .append(Float.isNaN(got[i]) ? "NaN (unwritten?)" : Float.toString(got[i])).append(", ")
                            .append(against).append(" +- ").append(allowed);
                }
                bad++;
            }
        }
        return bad == 0 ? null : what + ": " + bad + " of " + got.length + " elements outside the bound: " + first;
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;
import dev.irisjvm.kernels.gemm.GemmLayout;

/**
 * The operations that split K over the ranks and reduce the partials ({@link GemmAllReduce},
 * {@link GemmReduceScatter}): their shape and their checks of A, B and the bias, which differ only
 * in which rows of C a rank holds.
 */
abstract sealed class SplitKGemm extends FusedGemm permits GemmAllReduce, GemmReduceScatter {
    SplitKGemm(Parts p) {
        super(p);
    }

    public int n() {
        return n;
    }

    /** This rank's share of K. */
    public int kLocal() {
        return k;
    }

    /**
     * A [M, K_local], B [N, K_local] or [K_local, N] and the bias [N], then C by {@link #checkOutput}.
     */
    @Override
    final int check(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c, DType in) {
        String created = "this instance was created for M = " + m + ", N = " + n + ", K_local = " + k;
        FusedChecks.shape(who, a, "[M, K_local]", new long[] {m, k}, created);
        FusedChecks.b(who, b, layout, n, k, "N", "K_local", created);
        if (bias != null) {
            FusedChecks.bias(who, bias, n, "N", in);
        }
        return checkOutput(c, created);
    }

    /** The operation's check of C, whose messages end with {@code created}; returns C's leading dimension. */
    abstract int checkOutput(Operand c, String created);
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;

/**
 * GEMM + reduce-scatter, a row-parallel layer whose output stays split by rows (sequence
 * parallelism): K is split over the ranks, every rank computes its partial of every tile, and the
 * owner of each block of rows receives the peers' partials as they finish, adds them and stores
 * the sum into its own C, so that rank r ends with rows [r M / world, (r + 1) M / world) of
 * {@code sum_r A_r B_r} without a separate reduce-scatter ({@code gemm_reduce.cu}).
 *
 * <pre>{@code
 * // M = 8192 (4096 rows per rank out), N = 4096, K = 12288 split over 2 ranks
 * try (GemmReduceScatter op = GemmReduceScatter.create(iris, 8192, 4096, 6144, FusedConfig.defaults())) {
 *     SymTensor x = heap.randn(DType.BF16, 8192, 6144);      // this rank's A columns: M x K_local
 *     SymTensor w = heap.randn(DType.BF16, 4096, 6144);      // this rank's B rows: N x K_local (nk)
 *     SymTensor y = heap.empty(DType.BF16, 4096, 4096);      // C: this rank's M / world rows x N
 *     op.run(x, w, GemmLayout.NK, null, y, iris.stream());
 * }
 * }</pre>
 *
 * <h2>Arguments</h2>
 * <ul>
 * <li>A this rank's [M, K_local]; B this rank's [N, K_local] (NK) or [K_local, N] (KN); BF16 or F16.</li>
 * <li>bias (optional) [N] of the input type, added once: rank 0's is used, other ranks' are
 *     checked but not read.</li>
 * <li>C [M / world, ldc] of the input type: this rank's rows; ldc >= N, a multiple of 8. Only
 *     this rank writes it, so it need not be symmetric (any live heap tensor).</li>
 * <li>M a multiple of world; K_local and N multiples of 8. The fused kernels need M a multiple of
 *     128 x world (each rank's rows are whole tiles); for other M, {@link FusedVariant#AUTO} runs
 *     UNFUSED, whose calls then take a C of N columns only (ldc = N).</li>
 * </ul>
 * Rounding as {@link GemmAllReduce}. Variants as {@link GemmAllReduce}'s, UNFUSED's collective a
 * reduce-scatter of the partial (an M x N workspace per input type) into C; workspace as {@link
 * GemmAllReduce}'s. The rest of the contract is {@link FusedGemm}'s. Few rows: as {@link
 * GemmAllReduce} says, {@link FusedVariant#AUTO} runs UNFUSED there.
 */
public final class GemmReduceScatter extends SplitKGemm {
    private GemmReduceScatter(Parts p) {
        super(p);
    }

    /** {@link #create(Iris, int, int, int, FusedConfig)} with {@link FusedConfig#defaults()}. Collective. */
    public static GemmReduceScatter create(Iris iris, int m, int n, int kLocal) {
        return create(iris, m, n, kLocal, FusedConfig.defaults());
    }

    /** Collective: an instance for M x N outputs (M / world rows per rank) with K_local products per rank. */
    public static GemmReduceScatter create(Iris iris, int m, int n, int kLocal, FusedConfig config) {
        return new GemmReduceScatter(prepare(iris, FusedOp.REDUCE_SCATTER, m, n, kLocal, config));
    }

    /** Rows of the whole output. */
    public int m() {
        return m;
    }

    /** This rank's rows of C: M / world. */
    public int rowsPerRank() {
        return m / world;
    }

    /** The first row of the whole output that rank {@code r} holds. */
    public long firstRow(int r) {
        return (long) r * (m / world);
    }

    @Override
    int checkOutput(Operand c, String created) {
        return FusedChecks.output(who, c, m / world, n, "[M / world, ldc]",
                "this rank's " + (m / world) + " rows, ldc >= N = " + n + "; " + created);
    }
}

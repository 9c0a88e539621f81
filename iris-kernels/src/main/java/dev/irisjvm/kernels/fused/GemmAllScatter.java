package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;
import dev.irisjvm.kernels.gemm.GemmLayout;

/**
 * GEMM + all-scatter, a column-parallel layer: every rank holds all of A and its shard of B's
 * columns, computes its columns of C, and the kernel stores every finished tile into every rank's
 * C, so that each rank ends with the whole {@code C = A [B_0 B_1 ...]} without a separate
 * all-gather ({@code gemm_all_scatter.cu}).
 *
 * <pre>{@code
 * // bin/iris-run -n 2 -- java ... ; M = 4096, N = 8192 split over 2 ranks, K = 4096
 * try (Iris iris = Iris.init();
 *      GemmAllScatter op = GemmAllScatter.create(iris, 4096, 4096, 4096, FusedConfig.defaults())) {  // collective
 *     SymmetricHeap heap = iris.heap();
 *     SymTensor x = heap.randn(DType.BF16, 4096, 4096);        // A: M x K, the same on every rank
 *     SymTensor w = heap.randn(DType.BF16, 4096, 4096);        // this rank's B: N_local x K (a Linear weight shard)
 *     SymTensor y = heap.empty(DType.BF16, 4096, 8192);        // C: M x (world x N_local), symmetric
 *     op.run(x, w, GemmLayout.NK, null, y, iris.stream());     // y = x [w_0 w_1]^T on every rank
 *     iris.synchronize();
 * }
 * }</pre>
 *
 * <h2>Arguments</h2>
 * <ul>
 * <li>A [M, K]; B this rank's shard: [N_local, K] ({@link GemmLayout#NK}) or [K, N_local]
 *     ({@link GemmLayout#KN}); BF16 or F16, both the same.</li>
 * <li>bias (optional) [N_local] of the input type: this rank's columns' bias.</li>
 * <li>C [M, ldc] of the input type, <b>symmetric</b> (the same heap tensor on every rank: peers
 *     store into it), ldc >= world x N_local, a multiple of 8; rank r's columns are [r N_local,
 *     (r + 1) N_local); columns from world x N_local on are not written.</li>
 * <li>Shapes as created: M, N_local and K fixed per instance; K and N_local multiples of 8. C
 *     must not overlap A, B or the bias.</li>
 * </ul>
 * Results: {@code C[i][r N_local + j] = sum_k A[i][k] B_r(k, j) + bias_r[j]}, F32 accumulation,
 * rounded once to the input type (each element is one rank's plain GEMM result).
 *
 * <p>Variants: {@link FusedVariant#EPILOGUE} (the epilogue stores each piece to every
 * rank) and {@link FusedVariant#SPARE_WARPS} (the epilogue stores locally, the
 * spare producer warps copy the tile to the peers). Workspace: none, or the spare warps' handoff
 * flags ({@link FusedWorkspace}). The rest of the contract is {@link FusedGemm}'s.
 */
public final class GemmAllScatter extends FusedGemm {
    /** The shape this instance was created for, for messages. */
    private final String created;

    private GemmAllScatter(Parts p) {
        super(p);
        this.created = "this instance was created for M = " + m + ", N_local = " + n + ", K = " + k;
    }

    /** {@link #create(Iris, int, int, int, FusedConfig)} with {@link FusedConfig#defaults()}. Collective. */
    public static GemmAllScatter create(Iris iris, int m, int nLocal, int k) {
        return create(iris, m, nLocal, k, FusedConfig.defaults());
    }

    /**
     * Collective: an instance for A [M, K] times this rank's N_local columns of B, on every rank
     * (see {@link FusedGemm#prepare} for what creation does).
     */
    public static GemmAllScatter create(Iris iris, int m, int nLocal, int k, FusedConfig config) {
        return new GemmAllScatter(prepare(iris, FusedOp.ALL_SCATTER, m, nLocal, k, config));
    }

    public int m() {
        return m;
    }

    /** This rank's columns of C (and of B). */
    public int nLocal() {
        return n;
    }

    /** Columns of the whole C: world x N_local. */
    public long n() {
        return (long) world * n;
    }

    public int k() {
        return k;
    }

    /** The first column of C that rank {@code r} computes. */
    public long firstColumn(int r) {
        return (long) r * n;
    }

    @Override
    int check(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c, DType in) {
        FusedChecks.shape(who, a, "[M, K]", new long[] {m, k}, created);
        FusedChecks.b(who, b, layout, n, k, "N_local", "K", created);
        if (bias != null) {
            FusedChecks.bias(who, bias, n, "N_local", in);
        }
        int ldc = FusedChecks.output(who, c, m, (long) world * n, "[M, ldc]",
                "ldc >= world size " + world + " x N_local " + n + "; " + created);
        FusedChecks.symmetric(who, c, "every rank stores its tiles into the peers' C at the same heap offset");
        return ldc;
    }
}

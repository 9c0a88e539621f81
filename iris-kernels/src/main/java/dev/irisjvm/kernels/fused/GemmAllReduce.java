package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;

/**
 * GEMM + all-reduce, a row-parallel layer: K is split over the ranks, every rank computes its
 * partial product of every tile, and the tiles are reduced by their owners as they finish (rows
 * are owned in blocks of whole tiles; a peer's partials go to the owner with a per-tile flag, the
 * owner adds them to its own and stores the sum into every rank's C), so that each rank ends with
 * {@code C = sum_r A_r B_r} without a separate all-reduce ({@code gemm_reduce.cu}).
 *
 * <pre>{@code
 * // M = 4096, N = 4096, K = 8192 split over 2 ranks
 * try (GemmAllReduce op = GemmAllReduce.create(iris, 4096, 4096, 4096, FusedConfig.defaults())) {  // collective
 *     SymTensor x = heap.randn(DType.BF16, 4096, 4096);      // this rank's A columns: M x K_local
 *     SymTensor w = heap.randn(DType.BF16, 4096, 4096);      // this rank's B rows: N x K_local (nk)
 *     SymTensor y = heap.empty(DType.BF16, 4096, 4096);      // C: M x N, symmetric
 *     op.run(x, w, GemmLayout.NK, null, y, iris.stream());   // y = sum over ranks of x w^T, on every rank
 * }
 * }</pre>
 *
 * <h2>Arguments</h2>
 * <ul>
 * <li>A this rank's [M, K_local]; B this rank's [N, K_local] (NK) or [K_local, N] (KN); BF16 or F16.</li>
 * <li>bias (optional) [N] of the input type, added once: rank 0's is used (the kernel adds it to
 *     rank 0's partial); other ranks' bias arguments are checked but not read. Pass one on every
 *     rank or on none.</li>
 * <li>C [M, ldc] of the input type, <b>symmetric</b> (owners store the sums into every rank's C),
 *     ldc >= N, a multiple of 8; columns from N on are not written.</li>
 * <li>Shapes as created; K_local and N multiples of 8; C must not overlap A, B or the bias.</li>
 * </ul>
 * Results: every rank's partial is rounded once to the input type (partials travel in it), the
 * owner adds the partials in F32 and rounds the sum once: on two ranks, exactly how GEMM-then-NCCL
 * rounds it.
 *
 * <p>Variants: {@link FusedVariant#EPILOGUE} (the epilogue sends partials and sums), {@link
 * FusedVariant#SPARE_WARPS} (the epilogue stores locally, the spare producer warps send) and {@link
 * FusedVariant#UNFUSED} (no fused kernel: {@link dev.irisjvm.kernels.gemm.Gemm} then an in-place
 * {@link dev.irisjvm.kernels.ccl.Collectives#allReduce} of C; a call whose ldc &gt; N runs
 * SPARE_WARPS). Workspace ({@link FusedWorkspace}): the partials received (plus local staging with
 * SPARE_WARPS) and the per-tile flags, symmetric; UNFUSED also holds a GEMM and collectives whose
 * staging fits a one-shot all-reduce of C. The rest of the contract is {@link FusedGemm}'s.
 *
 * <p>Few rows: the fused kernel computes 128 x 256 tiles, each over the whole K_local on one SM, so
 * an M of up to 128 gives N / 256 SMs work. At 8 x 8192 x 14336 on one H200 a call took 142 µs where
 * the GEMM alone (cuBLAS, or {@link dev.irisjvm.kernels.gemm.Gemm}, which splits K) took 60
 * (docs/benchmarks/fused-findings.md, 2026-12-05). So {@link FusedVariant#AUTO} runs UNFUSED where
 * the tiles would occupy at most half of the SMs ({@link FusedVariant#choose}).
 */
public final class GemmAllReduce extends SplitKGemm {
    private GemmAllReduce(Parts p) {
        super(p);
    }

    /** {@link #create(Iris, int, int, int, FusedConfig)} with {@link FusedConfig#defaults()}. Collective. */
    public static GemmAllReduce create(Iris iris, int m, int n, int kLocal) {
        return create(iris, m, n, kLocal, FusedConfig.defaults());
    }

    /** Collective: an instance for M x N outputs with K_local products per rank (see {@link FusedGemm#prepare}). */
    public static GemmAllReduce create(Iris iris, int m, int n, int kLocal, FusedConfig config) {
        return new GemmAllReduce(prepare(iris, FusedOp.ALL_REDUCE, m, n, kLocal, config));
    }

    public int m() {
        return m;
    }

    @Override
    int checkOutput(Operand c, String created) {
        int ldc = FusedChecks.output(who, c, m, n, "[M, ldc]", "ldc >= N = " + n + "; " + created);
        FusedChecks.symmetric(who, c, "tile owners store the sums into every rank's C at the same heap offset");
        return ldc;
    }
}

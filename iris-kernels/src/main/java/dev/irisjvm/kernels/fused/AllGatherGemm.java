package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Tile;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;
import dev.irisjvm.kernels.gemm.GemmLayout;

/**
 * All-gather + GEMM, a sequence-parallel input into a column-parallel layer: A is split by rows
 * over the ranks; every rank computes {@code C_rank = A_gathered B_rank} while the spare producer
 * warps push this rank's rows of A into the peers' gathered A, in pieces of 128 rows by {@value
 * FusedWorkspace#PIECE_COLS} columns, and the tiles of local rows go first; a tile on a peer's rows
 * starts as soon as the first pieces of those rows are in, so that the all-gather hides behind the
 * GEMM ({@code all_gather_gemm.cu}, {@code fused/all_gather_hooks.cuh}). When its 128 x 256 tiles
 * would not fill half of the SMs (a small M), two blocks share each tile, each running half of K
 * ({@link FusedConfig#splitK}, {@code fused/split_k_exchange.cuh}), and blocks without a tile still
 * push.
 *
 * <pre>{@code
 * // M = 8192 gathered (4096 rows per rank), N = 8192 split over 2 ranks, K = 8192
 * try (AllGatherGemm op = AllGatherGemm.create(iris, 8192, 4096, 8192, FusedConfig.defaults())) {  // collective
 *     SymTensor a = heap.empty(DType.BF16, 8192, 8192);           // the gathered A: M x K, symmetric
 *     // fill this rank's rows [r M / world, (r + 1) M / world): op.localRows(a) is that window, at
 *     // a.deviceAddress() + op.firstRow(rank) * K * 2 bytes (a copy, a kernel, a RemoteTile store, ...)
 *     SymTensor w = heap.randn(DType.BF16, 4096, 8192);           // this rank's B: N x K (nk)
 *     SymTensor y = heap.empty(DType.BF16, 8192, 4096);           // C: M x N, this rank's columns
 *     op.run(a, w, GemmLayout.NK, null, y, iris.stream());        // also fills a's other rows from the peers
 * }
 * }</pre>
 *
 * <h2>Arguments</h2>
 * <ul>
 * <li>A the gathered [M, K], <b>symmetric</b>: before the call, rows [r M / world, (r + 1) M /
 *     world) hold rank r's rows on rank r (enqueued on the call's stream, or finished before it);
 *     the call fills the other rows from the peers (so the tensor must be the same heap tensor on
 *     every rank). Peers write those rows only once this rank's call has started, so work enqueued
 *     before the call may still read them; the call reads the local rows itself, so work enqueued
 *     after it may overwrite them.</li>
 * <li>B this rank's [N, K] (NK) or [K, N] (KN); BF16 or F16 like A.</li>
 * <li>bias (optional) [N] of the input type.</li>
 * <li>C [M, ldc] of the input type, this rank's output (need not be symmetric); ldc >= N, a
 *     multiple of 8. C must not overlap A, B or the bias.</li>
 * <li>M a multiple of world (the kernel: of 128 x world, whole 128-row tiles per rank); K and N
 *     multiples of 8.</li>
 * </ul>
 * Results: {@code C = A_gathered B + bias}, F32 accumulation rounded once (the plain GEMM's).
 *
 * <p>Variants: {@link FusedVariant#SPARE_WARPS}, the kernel (on the portable mainloop {@link
 * FusedVariant#EPILOGUE}: every block pushes its share of the rows, then computes); and {@link
 * FusedVariant#UNFUSED}, the library's all-gather in place (this rank's rows are its block of the
 * gathered A) then its GEMM, which AUTO runs where the rows per rank are not whole 128-row tiles
 * (decode's few tokens). Workspace ({@link FusedWorkspace}): a flag per piece of A and one per
 * rank, which peers set; with split-K a flag and an F32 partial per half tile. No closing barrier:
 * each call waits for every piece the peers push into it, and peers write into this rank's
 * gathered A only once its next call has started (UNFUSED's all-gather likewise). The rest of the
 * contract is {@link FusedGemm}'s.
 */
public final class AllGatherGemm extends FusedGemm {
    /** The shape this instance was created for, for messages. */
    private final String created;

    private AllGatherGemm(Parts p) {
        super(p);
        this.created = "this instance was created for M = " + m + " (gathered), N = " + n + ", K = " + k;
    }

    /** {@link #create(Iris, int, int, int, FusedConfig)} with {@link FusedConfig#defaults()}. Collective. */
    public static AllGatherGemm create(Iris iris, int m, int n, int k) {
        return create(iris, m, n, k, FusedConfig.defaults());
    }

    /** Collective: an instance for the gathered M x K A times this rank's N columns of B. */
    public static AllGatherGemm create(Iris iris, int m, int n, int k, FusedConfig config) {
        return new AllGatherGemm(prepare(iris, FusedOp.ALL_GATHER, m, n, k, config));
    }

    /** Rows of the gathered A and of C. */
    public int m() {
        return m;
    }

    /** This rank's columns of the layer's output. */
    public int n() {
        return n;
    }

    public int k() {
        return k;
    }

    /** Rows of A each rank contributes: M / world. */
    public int rowsPerRank() {
        return m / world;
    }

    /** The first row of the gathered A that rank {@code r} contributes. */
    public long firstRow(int r) {
        return (long) r * (m / world);
    }

    /** This rank's rows of a gathered A [M, K]: the window the caller fills before a call. */
    public Tile localRows(SymTensor gatheredA) {
        FusedChecks.notNull(who, "gatheredA", gatheredA);
        return gatheredA.tile(firstRow(rank), 0, rowsPerRank(), k);
    }

    @Override
    int check(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c, DType in) {
        FusedChecks.shape(who, a, "[M, K]", new long[] {m, k}, "the gathered A; " + created);
        FusedChecks.symmetric(who, a, "this rank pushes its rows into the peers' gathered A at the same heap offset");
        FusedChecks.b(who, b, layout, n, k, "N", "K", created);
        if (bias != null) {
            FusedChecks.bias(who, bias, n, "N", in);
        }
        return FusedChecks.output(who, c, m, n, "[M, ldc]", "ldc >= N = " + n + "; " + created);
    }
}

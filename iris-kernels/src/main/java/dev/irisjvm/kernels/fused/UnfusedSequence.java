package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;

/**
 * The calls of an instance of variant {@link FusedVariant#UNFUSED}: the library's GEMM and
 * collective in sequence on the call's stream, with the fused kernel's results and rounding.
 * <ul>
 * <li>All-reduce and reduce-scatter (C contiguous): the GEMM writes this rank's partial A B (plus
 *     the bias on rank 0), rounded once to the input type, then the collective sums the partials
 *     over the ranks in F32 and rounds once. All-reduce sums C in place (one-shot or two-shot as
 *     {@link Collectives} chooses by size); reduce-scatter writes the partial into a workspace of
 *     M x N (one per input type) and reduce-scatters it into C.</li>
 * <li>All-gather + GEMM (any ldc): an in-place all-gather of the gathered A (this rank's rows are
 *     its block of the collective's output), then the GEMM of all of it into C.</li>
 * </ul>
 */
final class UnfusedSequence implements AutoCloseable {
    private final FusedOp op;
    private final Gemm gemm;
    private final Collectives collectives;
    private final int rank;
    private final int world;
    /** The kernel's M and N: C's rows (all of them, or all-gather's) and columns. */
    private final long m;
    private final long n;
    /** Reduce-scatter: the M x N partial of each input type (null for the others). */
    private final SymTensor bf16Partial;
    private final SymTensor f16Partial;

    private UnfusedSequence(FusedOp op, Gemm gemm, Collectives collectives, int rank, int world, long m, long n,
                            SymTensor bf16Partial, SymTensor f16Partial) {
        this.op = op;
        this.gemm = gemm;
        this.collectives = collectives;
        this.rank = rank;
        this.world = world;
        this.m = m;
        this.n = n;
        this.bf16Partial = bf16Partial;
        this.f16Partial = f16Partial;
    }

    /**
     * Collective: a GEMM on {@code mainloop}, collectives (for all-reduce with staging that holds a
     * one-shot all-reduce of an M x N C of a 2-byte type, {@link #stagingBytes}; all-gather needs
     * none), and for reduce-scatter the partials' workspace on the symmetric heap.
     */
    static UnfusedSequence create(Iris iris, FusedOp op, GemmMainloop mainloop, long m, long n) {
        if (!op.variants().contains(FusedVariant.UNFUSED)) {
            throw new IllegalArgumentException(op.title() + " has no UNFUSED variant");
        }
        int rank = iris.node().index();
        int world = iris.node().size();
        Gemm gemm = Gemm.create(Gemm.Options.defaults().withMainloop(mainloop));
        Collectives collectives = null;
        SymTensor bf16 = null;
        try {
            long staging = op == FusedOp.ALL_GATHER ? 0 : stagingBytes(m * n * 2, world);
            collectives = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(staging));
            if (op != FusedOp.REDUCE_SCATTER) {
                return new UnfusedSequence(op, gemm, collectives, rank, world, m, n, null, null);
            }
            bf16 = iris.heap().empty(DType.BF16, m, n);
            SymTensor f16 = iris.heap().empty(DType.F16, m, n);
            return new UnfusedSequence(op, gemm, collectives, rank, world, m, n, bf16, f16);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, bf16, collectives, gemm);
            throw e;
        }
    }

    /**
     * Staging for a one-shot all-reduce of {@code bytes} on {@code world} ranks, at most the
     * collectives' default: a larger C is reduced two-shot, which needs none.
     */
    static long stagingBytes(long bytes, int world) {
        return Math.min(Collectives.Options.DEFAULT_STAGING_BYTES, Collectives.oneShotStagingBytes(bytes, world));
    }

    /**
     * Whether a call whose C has leading dimension {@code ldc} runs here: all-gather's always (its
     * GEMM writes C as a matrix of any leading dimension), the reductions' when C is contiguous
     * (their collectives would overwrite the columns past N; the fused kernel runs those calls).
     */
    boolean takes(long ldc) {
        return op == FusedOp.ALL_GATHER || ldc == n;
    }

    /**
     * The reductions: C = the sum over ranks of A B plus {@code bias} (rank 0's; null on the
     * others), all of it or this rank's rows. All-gather: A's other rows from the peers, then C =
     * A B + bias.
     */
    void run(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream) {
        switch (op) {
            case ALL_REDUCE -> {
                gemm.matmul(a, b, layout, bias, c, stream);
                collectives.allReduce(c, c, ReduceOp.SUM, stream);
            }
            case REDUCE_SCATTER -> {
                SymTensor partial = a.dtype() == DType.BF16 ? bf16Partial : f16Partial;
                gemm.matmul(a, b, layout, bias, partial, stream);
                collectives.reduceScatter(partial, c, ReduceOp.SUM, stream);
            }
            case ALL_GATHER -> {
                collectives.allGather(a.chunk(rank, world), a, stream);
                gemm.matmul(DeviceMatrix.of(a), DeviceMatrix.of(b), layout, bias == null ? 0 : bias.deviceAddress(),
                        DeviceMatrix.of(c.tile(0, 0, m, n)), stream);
            }
            default -> throw new IllegalStateException(op.title() + " has no UNFUSED variant");
        }
    }

    /** Collective, as {@link Collectives#close()}. */
    @Override
    public void close() {
        Resources.closeAll(f16Partial, bf16Partial, collectives, gemm);
    }
}

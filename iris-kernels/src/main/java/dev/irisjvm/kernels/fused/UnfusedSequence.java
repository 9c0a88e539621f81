package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;

/**
 * The calls of a {@link GemmAllReduce} or {@link GemmReduceScatter} of variant {@link
 * FusedVariant#UNFUSED} whose C is contiguous: the library's GEMM writes this rank's partial A B
 * (plus the bias on rank 0), rounded once to the input type, then the library's collective sums the
 * partials over the ranks in F32 and rounds once: the fused kernel's rounding. All-reduce sums C in
 * place (one-shot or two-shot as {@link Collectives} chooses by size); reduce-scatter writes the
 * partial into a workspace of M x N (one per input type) and reduce-scatters it into C.
 */
final class UnfusedReduction implements AutoCloseable {
    private final FusedOp op;
    private final Gemm gemm;
    private final Collectives collectives;
    /** Reduce-scatter: the M x N partial of each input type (null for all-reduce). */
    private final SymTensor bf16Partial;
    private final SymTensor f16Partial;

    private UnfusedReduction(FusedOp op, Gemm gemm, Collectives collectives, SymTensor bf16Partial, SymTensor f16Partial) {
        this.op = op;
        this.gemm = gemm;
        this.collectives = collectives;
        this.bf16Partial = bf16Partial;
        this.f16Partial = f16Partial;
    }

    /**
     * Collective: a GEMM on {@code mainloop}, collectives whose staging holds a one-shot all-reduce
     * of an M x N C of a 2-byte type ({@link #stagingBytes}), and for reduce-scatter the partials'
     * workspace on the symmetric heap.
     */
    static UnfusedReduction create(Iris iris, FusedOp op, GemmMainloop mainloop, long m, long n) {
        if (!op.variants().contains(FusedVariant.UNFUSED)) {
            throw new IllegalArgumentException(op.title() + " has no UNFUSED variant");
        }
        Gemm gemm = Gemm.create(Gemm.Options.defaults().withMainloop(mainloop));
        Collectives collectives = null;
        SymTensor bf16 = null;
        try {
            long staging = stagingBytes(m * n * 2, iris.node().size());
            collectives = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(staging));
            if (op == FusedOp.ALL_REDUCE) {
                return new UnfusedReduction(op, gemm, collectives, null, null);
            }
            bf16 = iris.heap().empty(DType.BF16, m, n);
            SymTensor f16 = iris.heap().empty(DType.F16, m, n);
            return new UnfusedReduction(op, gemm, collectives, bf16, f16);
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

    /** C = the sum over ranks of A B plus {@code bias} (rank 0's; null on the others): all of it, or this rank's rows. */
    void run(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream) {
        if (op == FusedOp.ALL_REDUCE) {
            gemm.matmul(a, b, layout, bias, c, stream);
            collectives.allReduce(c, c, ReduceOp.SUM, stream);
            return;
        }
        SymTensor partial = a.dtype() == DType.BF16 ? bf16Partial : f16Partial;
        gemm.matmul(a, b, layout, bias, partial, stream);
        collectives.reduceScatter(partial, c, ReduceOp.SUM, stream);
    }

    /** Collective, as {@link Collectives#close()}. */
    @Override
    public void close() {
        Resources.closeAll(f16Partial, bf16Partial, collectives, gemm);
    }
}

package dev.irisjvm.kernels.fused;

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
 * The calls of a {@link GemmAllReduce} of variant {@link FusedVariant#UNFUSED} whose C is contiguous:
 * the library's GEMM writes this rank's partial A B (plus the bias on rank 0) into C, rounded once
 * to C's type, then the library's all-reduce sums C in place on every rank, in F32, rounded once
 * (one-shot or two-shot as {@link Collectives} chooses by size): the fused kernel's rounding.
 */
final class UnfusedAllReduce implements AutoCloseable {
    private final Gemm gemm;
    private final Collectives collectives;

    private UnfusedAllReduce(Gemm gemm, Collectives collectives) {
        this.gemm = gemm;
        this.collectives = collectives;
    }

    /**
     * Collective: a GEMM on {@code mainloop} and collectives whose staging holds a one-shot
     * all-reduce of an M x N C of a 2-byte type on {@code world} ranks ({@link #stagingBytes}).
     */
    static UnfusedAllReduce create(Iris iris, GemmMainloop mainloop, long m, long n) {
        Gemm gemm = Gemm.create(Gemm.Options.defaults().withMainloop(mainloop));
        try {
            long staging = stagingBytes(m * n * 2, iris.node().size());
            return new UnfusedAllReduce(gemm, Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(staging)));
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, gemm);
            throw e;
        }
    }

    /**
     * Staging for a one-shot all-reduce of {@code bytes} on {@code world} ranks, at most the
     * collectives' default: a larger C is reduced two-shot, which needs none.
     */
    static long stagingBytes(long bytes, int world) {
        return Math.min(Collectives.Options.DEFAULT_STAGING_BYTES, world * ((bytes + 15) / 16 * 16));
    }

    /** C = the sum over ranks of A B, plus {@code bias} (rank 0's; null on the others), on every rank. */
    void run(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream) {
        gemm.matmul(a, b, layout, bias, c, stream);
        collectives.allReduce(c, c, ReduceOp.SUM, stream);
    }

    /** Collective, as {@link Collectives#close()}. */
    @Override
    public void close() {
        Resources.closeAll(collectives, gemm);
    }
}

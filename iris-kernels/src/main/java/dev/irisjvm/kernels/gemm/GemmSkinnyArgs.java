package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_gemm_skinny_args;

/**
 * The one argument of every {@code iris_gemm_skinny_*} kernel ({@code iris_gemm_skinny_args},
 * iris/abi/gemm_portable.h), kept for the life of a {@link Gemm} and refilled by each call; the launch
 * copies it. A fill allocates nothing. Not thread-safe (Gemm's calls are synchronized).
 */
final class GemmSkinnyArgs implements AutoCloseable {
    private final iris_gemm_skinny_args args = new iris_gemm_skinny_args();
    private final DeviceAddress a = new DeviceAddress();
    private final DeviceAddress b = new DeviceAddress();
    private final DeviceAddress c = new DeviceAddress();
    private final DeviceAddress bias = new DeviceAddress();
    private final DeviceAddress partials = new DeviceAddress();
    private final DeviceAddress counters = new DeviceAddress();

    /** The struct of one checked problem split as {@code split} says, on the given workspace addresses (0 for one slice). */
    iris_gemm_skinny_args of(GemmProblem p, SkinnyGemm.Split split, long partialsAddress, long countersAddress) {
        return args.a(a.at(p.a().address())).b(b.at(p.b().address())).c(c.at(p.c().address())).bias(bias.at(p.bias()))
                .partials(partials.at(partialsAddress)).counters(counters.at(countersAddress))
                .lda(p.a().ld()).ldb(p.b().ld()).ldc(p.c().ld()).m(p.m()).n(p.n()).k(p.k())
                .slices(split.slices()).k_blocks_per_slice(split.kBlocksPerSlice()).alpha(p.alpha()).beta(p.beta());
    }

    @Override
    public void close() {
        args.close();
    }
}

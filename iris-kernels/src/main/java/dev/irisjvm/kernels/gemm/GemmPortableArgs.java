package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_gemm_portable_args;

/**
 * The one argument of every {@code iris_gemm_portable_*} kernel ({@code iris_gemm_portable_args},
 * iris/abi/gemm_portable.h), kept for the life of a {@link Gemm} and refilled by each call; the
 * launch copies it, so the next call may refill it at once. A fill allocates nothing. Not
 * thread-safe (Gemm's calls are synchronized).
 */
final class GemmPortableArgs implements AutoCloseable {
    private final iris_gemm_portable_args args = new iris_gemm_portable_args();
    private final DeviceAddress a = new DeviceAddress();
    private final DeviceAddress b = new DeviceAddress();
    private final DeviceAddress c = new DeviceAddress();
    private final DeviceAddress bias = new DeviceAddress();

    /** The struct of one checked problem, its tiles walked in groups of {@code groupM} tile rows. */
    iris_gemm_portable_args of(GemmProblem p, int groupM) {
        return args.a(a.at(p.a().address())).b(b.at(p.b().address())).c(c.at(p.c().address())).bias(bias.at(p.bias()))
                .lda(p.a().ld()).ldb(p.b().ld()).ldc(p.c().ld()).m(p.m()).n(p.n()).k(p.k()).group_m(groupM).alpha(p.alpha()).beta(p.beta());
    }

    @Override
    public void close() {
        args.close();
    }
}

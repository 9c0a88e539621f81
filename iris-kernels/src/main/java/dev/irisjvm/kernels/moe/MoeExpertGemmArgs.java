package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.runtime.abi.iris_moe_gemm_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument of the expert GEMM kernels ({@code iris_moe_gemm_args}, iris/abi/moe.h), kept
 * for the life of a {@link MoeExpertGemm}: the context, the dispatch's counts, sources, tile
 * arrivals and claim counter and the shape are set once; each call sets its two tensor maps and
 * where the rows go. The launch copies the struct, so the next call may refill it at once. Not
 * thread-safe (the calls are synchronized).
 */
final class MoeExpertGemmArgs implements AutoCloseable {
    private final iris_moe_gemm_args args = new iris_moe_gemm_args();
    private final BytePointer aMap = new BytePointer(args.a_map());
    private final BytePointer bMap = new BytePointer(args.b_map());
    private final DeviceAddress out = new DeviceAddress();

    /**
     * @param ctx the packed context ({@link DeviceContext#bytes()})
     * @param n   output columns per expert
     * @param k   products per output element (the layer's hidden)
     */
    MoeExpertGemmArgs(byte[] ctx, long counts, long sources, long arrivals, long claims, int localExperts, int capacity, int n,
                      int k) {
        new BytePointer(args.ctx()).put(ctx);
        // The generated setter of iris_moe_gemm_args.capacity is _capacity: Pointer has a capacity() of its own.
        args.counts(new DeviceAddress().at(counts)).sources(new DeviceAddress().at(sources))
                .arrivals(new DeviceAddress().at(arrivals)).claims(new DeviceAddress().at(claims)).local_experts(localExperts)
                ._capacity(capacity).n(n).k(k);
    }

    /** The next launch's maps: the receive buffer's and the weights'. */
    void maps(TensorMap received, TensorMap weights) {
        received.copyTo(aMap);
        weights.copyTo(bMap);
    }

    /** The struct of one call, its maps set by {@link #maps}: where the rows go (the output, or combine's staging). */
    iris_moe_gemm_args call(long outAddress) {
        return args.out(out.at(outAddress));
    }

    @Override
    public void close() {
        args.close();
    }
}

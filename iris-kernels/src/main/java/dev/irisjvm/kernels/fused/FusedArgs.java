package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.runtime.abi.iris_fused_args;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.LongPointer;

/**
 * The one argument of every fused kernel ({@code iris_fused_args}, iris/abi/fused.h), kept for the
 * life of a {@link FusedGemm}: the context, the workspace, the trace buffer and the shape are set
 * once; each call sets its maps, tensors and epoch. The launch copies the struct, so the next call
 * may refill it at once, and a call allocates nothing. Not thread-safe (FusedGemm's calls are
 * synchronized).
 */
final class FusedArgs implements AutoCloseable {
    private final iris_fused_args args = new iris_fused_args();
    private final BytePointer aMap = new BytePointer(args.a_map());
    private final BytePointer bMap = new BytePointer(args.b_map());
    private final DeviceAddress c = new DeviceAddress();
    private final DeviceAddress bias = new DeviceAddress();
    private final DeviceAddress a = new DeviceAddress();
    private final DeviceAddress b = new DeviceAddress();

    /**
     * What every call of one instance shares.
     *
     * @param ctx      the packed context ({@link DeviceContext#bytes()})
     * @param partials the workspace's partials (the reductions' ws, all-gather's split-K halves), or 0
     * @param flags    the workspace's flags (all-scatter's handoff, the reductions' and all-gather's), or 0
     * @param trace    the trace buffer, or 0 when tracing is off
     * @param slices   units of K per tile (1, or 2 for all-gather's split-K)
     */
    FusedArgs(byte[] ctx, long partials, long flags, long trace, int m, int n, int k, int groupM, int slices) {
        new BytePointer(args.ctx()).put(ctx);
        args.partials(new DeviceAddress().at(partials)).flags(new LongPointer(new DeviceAddress().at(flags)))
                .trace(new LongPointer(new DeviceAddress().at(trace))).m(m).n(n).k(k).group_m(groupM).slices(slices);
    }

    /** A's and B's maps of the next launch (the Hopper kernels'). */
    void maps(TensorMap a, TensorMap b) {
        a.copyTo(aMap);
        b.copyTo(bMap);
    }

    /**
     * The struct of one call, the Hopper kernels' maps set by {@link #maps}: A (the portable kernels',
     * and all-gather's gathered A; else 0), B (the portable kernels'; else 0), C, the bias (0: none),
     * C's leading dimension and the call's epoch.
     */
    iris_fused_args call(long aAddress, long bAddress, long cAddress, long biasAddress, int ldc, long epoch) {
        return args.a(a.at(aAddress)).b(b.at(bAddress)).c(c.at(cAddress)).bias(bias.at(biasAddress)).ldc(ldc).epoch(epoch);
    }

    @Override
    public void close() {
        args.close();
    }
}

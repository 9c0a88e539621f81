package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_moe_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument of the MoE dispatch and combine kernels ({@code iris_moe_args}, iris/abi/moe.h),
 * kept for the life of an {@link MoeDispatch} or {@link MoeCombine}: the context, the layer's shape
 * and the instance's buffers are set once, each call sets its operands and launches; the launch
 * copies the struct, so the next call may refill it at once. Filling it allocates nothing. Not
 * thread-safe (the calls are synchronized).
 */
final class MoeArgs implements AutoCloseable {
    private final iris_moe_args args = new iris_moe_args();
    private final DeviceAddress tokens = new DeviceAddress();
    private final DeviceAddress expertIds = new DeviceAddress();
    private final DeviceAddress weights = new DeviceAddress();
    private final DeviceAddress expertOut = new DeviceAddress();
    private final DeviceAddress out = new DeviceAddress();

    /** The device addresses of an instance's buffers. */
    record Buffers(long workspace, long recv, long sources, long counts, long routed, long staging) {}

    /**
     * @param ctx    the packed context ({@link DeviceContext#bytes()})
     * @param layout where the workspace's parts lie
     */
    MoeArgs(byte[] ctx, MoeConfig c, MoeLayout layout, Buffers b) {
        new BytePointer(args.ctx()).put(ctx);
        long ws = b.workspace();
        args.workspace(new DeviceAddress().at(ws)).block_counts(new DeviceAddress().at(ws + layout.blockCounts()))
                .routes(new DeviceAddress().at(ws + layout.routes())).route_weights(new DeviceAddress().at(ws + layout.routeWeights()))
                .recv(new DeviceAddress().at(b.recv())).sources(new DeviceAddress().at(b.sources()))
                .counts(new DeviceAddress().at(b.counts())).routed(new DeviceAddress().at(b.routed()))
                .staging(new DeviceAddress().at(b.staging())).expert_base(new DeviceAddress().at(ws + layout.expertBase()))
                .by_expert(new DeviceAddress().at(ws + layout.byExpert())).arrivals(new DeviceAddress().at(ws + layout.arrivals()));
        // The generated setter of iris_moe_args.capacity is _capacity: Pointer has a capacity() of its own.
        args.hidden(c.hidden()).experts(c.experts()).top_k(c.topK())._capacity(c.capacity()).policy(c.policy().code());
    }

    /** A dispatch of {@code numTokens} tokens: their rows, expert ids and weights. */
    iris_moe_args dispatch(long tokensAddress, long expertIdsAddress, long weightsAddress, int numTokens) {
        return args.tokens(tokens.at(tokensAddress)).expert_ids(expertIds.at(expertIdsAddress)).weights(weights.at(weightsAddress))
                .tokens_n(numTokens);
    }

    /** The combine after a dispatch of {@code numTokens} tokens: the experts' outputs and where the sums go. */
    iris_moe_args combine(long expertOutAddress, long outAddress, int numTokens) {
        return args.expert_out(expertOut.at(expertOutAddress)).out(out.at(outAddress)).tokens_n(numTokens);
    }

    @Override
    public void close() {
        args.close();
    }
}

package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_moe_ll_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument of the low-latency kernels ({@code iris_moe_ll_args}, iris/abi/moe.h), kept for
 * the life of a {@link MoeLowLatency}: context, shape and buffers set once, each call sets its
 * operands; the launch copies the struct. Filling it allocates nothing. Not thread-safe.
 */
final class MoeLowLatencyArgs implements AutoCloseable {
    private final iris_moe_ll_args args = new iris_moe_ll_args();
    private final DeviceAddress tokens = new DeviceAddress();
    private final DeviceAddress expertIds = new DeviceAddress();
    private final DeviceAddress weights = new DeviceAddress();
    private final DeviceAddress expertOut = new DeviceAddress();
    private final DeviceAddress out = new DeviceAddress();

    /** The device addresses of an instance's buffers. */
    record Buffers(long workspace, long recv, long recvRoutes, long counts, long staging) {}

    /** @param ctx the packed context ({@link DeviceContext#bytes()}) */
    MoeLowLatencyArgs(byte[] ctx, MoeConfig c, MoeLowLatencyLayout layout, Buffers b) {
        new BytePointer(args.ctx()).put(ctx);
        long ws = b.workspace();
        args.workspace(new DeviceAddress().at(ws)).routes(new DeviceAddress().at(ws + layout.routes()))
                .route_weights(new DeviceAddress().at(ws + layout.routeWeights())).recv(new DeviceAddress().at(b.recv()))
                .recv_routes(new DeviceAddress().at(b.recvRoutes())).counts(new DeviceAddress().at(b.counts()))
                .staging(new DeviceAddress().at(b.staging()));
        args.hidden(c.hidden()).experts(c.experts()).top_k(c.topK()).region_rows(layout.regionRows()).reserved(0);
    }

    /** A dispatch of {@code numTokens} tokens: their rows, expert ids and weights. */
    iris_moe_ll_args dispatch(long tokensAddress, long expertIdsAddress, long weightsAddress, int numTokens) {
        return args.tokens(tokens.at(tokensAddress)).expert_ids(expertIds.at(expertIdsAddress)).weights(weights.at(weightsAddress))
                .tokens_n(numTokens);
    }

    /** The combine after a dispatch of {@code numTokens} tokens: the experts' outputs and where the sums go. */
    iris_moe_ll_args combine(long expertOutAddress, long outAddress, int numTokens) {
        return args.expert_out(expertOut.at(expertOutAddress)).out(out.at(outAddress)).tokens_n(numTokens);
    }

    @Override
    public void close() {
        args.close();
    }
}

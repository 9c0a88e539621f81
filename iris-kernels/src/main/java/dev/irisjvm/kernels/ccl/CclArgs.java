package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_ccl_args;
import dev.irisjvm.runtime.abi.iris_ccl_counts;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument every collective kernel takes ({@code iris_ccl_args}, iris/abi/ccl.h), kept
 * for the life of a {@link Collectives}: the context and the workspace are set once, each call
 * sets its own fields and launches; the launch copies the struct, so the next call may refill it
 * at once. Not thread-safe (Collectives' calls are synchronized).
 */
final class CclArgs implements AutoCloseable {
    private final iris_ccl_args args = new iris_ccl_args();
    private final iris_ccl_counts counts = args.counts();
    private final DeviceAddress in = new DeviceAddress();
    private final DeviceAddress out = new DeviceAddress();
    private final DeviceAddress stage = new DeviceAddress();

    /** @param ctx the packed context ({@link DeviceContext#bytes()}) */
    CclArgs(byte[] ctx, long workspace, long stagingBytes) {
        new BytePointer(args.ctx()).put(ctx);
        args.workspace(new BytePointer(new DeviceAddress().at(workspace))).staging_bytes(stagingBytes);
    }

    /** A call's operands: {@code count} is elements for the reductions, bytes for the copies. */
    iris_ccl_args call(long inAddress, long outAddress, long count) {
        return args.in(in.at(inAddress)).out(out.at(outAddress)).count(count);
    }

    /** broadcast: the buffer (in place) and the root. */
    iris_ccl_args broadcast(long buffer, long bytes, int root) {
        return call(0, buffer, bytes).root(root);
    }

    /** The copy-engine all-reduce's reduction of elements [begin, end), the peers' copies {@code stride} bytes apart at {@code staged}. */
    iris_ccl_args chunk(long inAddress, long outAddress, long staged, long stride, long begin, long end) {
        return call(inAddress, outAddress, 0).stage(stage.at(staged)).stride(stride).begin(begin).end(end);
    }

    /** all-to-all-v: per-rank counts and displacements in elements (ranks beyond the world are zero). */
    iris_ccl_args allToAllV(long inAddress, long outAddress, long[] sendCounts, long[] sendDispls, long[] recvCounts,
                            long[] recvDispls, int elementBytes) {
        for (int r = 0; r < DeviceContext.MAX_RANKS; r++) {
            counts.send_count(r, at(sendCounts, r)).send_displ(r, at(sendDispls, r))
                    .recv_count(r, at(recvCounts, r)).recv_displ(r, at(recvDispls, r));
        }
        counts.elem_bytes(elementBytes);
        return call(inAddress, outAddress, 0);
    }

    private static long at(long[] values, int r) {
        return r < values.length ? values[r] : 0L;
    }

    @Override
    public void close() {
        args.close();
    }
}

package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.nccl.NcclCommunicator;

/**
 * The world all-reduce of {@link WorldCollectives} in chunks, its three levels on three streams so
 * that they overlap: while NCCL sums chunk k between nodes, the node reduce-scatters chunk k + 1 and
 * all-gathers chunk k - 1. Run one after the other, the levels cost the node's NVLink time plus the
 * network's; overlapped, about the larger of the two, which is what makes two levels faster than a
 * flat NCCL ring at all (docs/multinode-cost-model.md).
 *
 * <p>The reduce-scatters and the all-gathers run at the same time, so each has a {@link Collectives}
 * (a workspace) of its own; each instance's calls stay in order on its stream. The caller's stream
 * forks into the three and joins them again, with events, so the call is stream-ordered and can be
 * captured in a CUDA graph like any other.
 */
final class PipelinedAllReduce implements AutoCloseable {
    static final int MAX_CHUNKS = 8;
    /** Chunk boundaries are multiples of this many elements per node rank: 512-byte aligned views for every dtype. */
    static final long ALIGN_ELEMENTS = 256;

    private final Collectives scatter;
    private final Collectives gather;
    private final NcclCommunicator rail;
    private final int nodeSize;
    private final Stream scatterStream = Stream.create();
    private final Stream railStream = Stream.create();
    private final Stream gatherStream = Stream.create();
    private final Event start = Event.untimed();
    private final Event done = Event.untimed();
    private final Event[] scattered = new Event[MAX_CHUNKS];
    private final Event[] summed = new Event[MAX_CHUNKS];

    PipelinedAllReduce(Collectives scatter, Collectives gather, NcclCommunicator rail, int nodeSize) {
        this.scatter = scatter;
        this.gather = gather;
        this.rail = rail;
        this.nodeSize = nodeSize;
        for (int k = 0; k < MAX_CHUNKS; k++) {
            scattered[k] = Event.untimed();
            summed[k] = Event.untimed();
        }
    }

    /**
     * Elements per chunk for {@code n} elements of {@code elementBytes} on nodes of {@code nodeSize}
     * ranks, chunks of about {@code chunkBytes} and at most {@link #MAX_CHUNKS}: a multiple of
     * nodeSize x {@link #ALIGN_ELEMENTS}, or n itself where one chunk is all there is.
     */
    static long chunkElements(long n, int elementBytes, int nodeSize, long chunkBytes) {
        long unit = nodeSize * ALIGN_ELEMENTS;
        long wanted = Math.max(1, Math.min(MAX_CHUNKS, ceilDiv(n * elementBytes, Math.max(1, chunkBytes))));
        long per = ceilDiv(ceilDiv(n, wanted), unit) * unit;
        return per >= n ? n : per;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /** {@code out} = the world reduction of {@code in}, through {@code shard} (in's count / node size). */
    void run(SymTensor in, SymTensor out, SymTensor shard, ReduceOp op, long chunk, Stream stream) {
        long n = in.numel();
        start.record(stream);
        scatterStream.waitFor(start);
        railStream.waitFor(start);
        gatherStream.waitFor(start);
        int k = 0;
        for (long off = 0; off < n; off += chunk, k++) {
            long len = Math.min(chunk, n - off);
            SymTensor part = shard.slice(off / nodeSize, len / nodeSize);
            scatter.reduceScatter(in.slice(off, len), part, op, scatterStream);
            scattered[k].record(scatterStream);
            railStream.waitFor(scattered[k]);
            rail.allReduce(part.deviceAddress(), part.deviceAddress(), part.numel(), part.dtype(), op, railStream);
            summed[k].record(railStream);
            gatherStream.waitFor(summed[k]);
            gather.allGather(part, out.slice(off, len), gatherStream);
        }
        // The last all-gather waited for the last NCCL call, which waited for the last reduce-scatter.
        done.record(gatherStream);
        stream.waitFor(done);
    }

    /** Collective: the second workspace; the streams and events. The first Collectives is the caller's. */
    @Override
    public void close() {
        gather.close();
        for (int k = 0; k < MAX_CHUNKS; k++) {
            scattered[k].close();
            summed[k].close();
        }
        start.close();
        done.close();
        scatterStream.close();
        railStream.close();
        gatherStream.close();
    }
}

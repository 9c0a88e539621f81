package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.ccl.CclChecks.Operand;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * All-reduce, all-gather, reduce-scatter, broadcast and all-to-all(-v) over every rank of the job, across nodes, in two levels: the part inside a node on
 * the symmetric heap ({@link Collectives}), the part between nodes in NCCL on the rail (the ranks
 * at the same node index on every node), chained on one stream.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); WorldCollectives world = WorldCollectives.create(iris)) {   // collective
 *     SymTensor grad = iris.heap().randn(DType.BF16, 1 << 24);
 *     SymTensor sum = iris.heap().empty(DType.BF16, 1 << 24);
 *     world.allReduce(grad, sum, ReduceOp.AVG, iris.stream());   // the mean over every rank of every node
 *     iris.synchronize();
 * }
 * }</pre>
 *
 * <p>All-reduce of n elements on a job of N nodes of L ranks: node reduce-scatter (each node rank
 * gets the node's reduction of one n / L shard), rail all-reduce of that shard across the N nodes
 * in NCCL, node all-gather of the shards into {@code out}. Inputs larger than
 * {@link Options#pipelineChunkBytes()} go in chunks whose three levels overlap on three streams
 * (see docs/multinode-cost-model.md for why that matters). On one node it is {@link
 * Collectives#allReduce} and needs no NCCL; on nodes of one rank it is NCCL's all-reduce on the
 * rail, which is then the world; on a job of one rank it copies {@code in} to {@code out}.
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>Creation and close are collective over the whole job. Every node holds the same number of
 *     ranks. The NCCL communicators ({@link NcclTeams}) are made by the first creation on a job of
 *     several nodes and closed with the {@link Iris} instance; NCCL_NVLS_ENABLE must be 0.</li>
 * <li>Every rank makes the same calls in the same order with tensors of the same shapes.
 *     Tensors are symmetric (allocated collectively on the heap), {@code in} and {@code out}
 *     distinct, BF16, F16 or F32, with an element count that the node size divides.</li>
 * <li>The first call with a new dtype and size allocates the buffer between the levels on the heap,
 *     and the first all-reduce that goes in chunks a second {@link Collectives} workspace and its
 *     streams: collective, and not possible inside a CUDA graph capture, so make one call before
 *     capturing.</li>
 * <li>Calls only enqueue work on the stream (no host synchronization); device errors surface at
 *     the next {@link Iris#synchronize}. Bad arguments throw {@link IllegalArgumentException}
 *     naming the rank, the call, the argument and what was expected, before anything is enqueued.</li>
 * <li>Results: the node level reduces in float and rounds once per node (as {@link Collectives}
 *     does); NCCL then reduces the N node results in the element type, in its own order. So the
 *     result is not bit-identical to a flat NCCL all-reduce in general; it is within the rounding of
 *     N + 1 additions of that type.</li>
 * </ul>
 */
public final class WorldCollectives implements AutoCloseable {
    /**
     * Tuning of the world collectives.
     *
     * @param pipelineChunkBytes the all-reduce works in chunks of about this many bytes (at most
     *                           {@value PipelinedAllReduce#MAX_CHUNKS}), whose node and NCCL levels
     *                           overlap on three streams; an input of at most this size runs its
     *                           levels one after the other on the caller's stream
     */
    public record Options(long pipelineChunkBytes) {
        public Options {
            if (pipelineChunkBytes < 1) {
                throw new IllegalArgumentException("pipelineChunkBytes must be positive, got " + pipelineChunkBytes);
            }
        }

        /** Chunks of 16 MiB: large enough that each level's kernels run at their full rate. */
        public static Options defaults() {
            return new Options(16L << 20);
        }

        public Options withPipelineChunkBytes(long bytes) {
            return new Options(bytes);
        }
    }

    private final Iris iris;
    private final int rank;
    private final int nodeSize;
    private final Collectives node;          // null on nodes of one rank
    private final NcclCommunicator rail;     // null on one node
    private final boolean consecutiveNodes;  // world rank = node index x node size + index in the node
    private final Options options;
    private PipelinedAllReduce pipeline;  // made by the first all-reduce that goes in chunks
    private final Map<String, SymTensor> shards = new LinkedHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private WorldCollectives(Iris iris, Collectives node, NcclCommunicator rail, boolean consecutiveNodes, Options options) {
        this.iris = iris;
        this.consecutiveNodes = consecutiveNodes;
        this.rank = iris.rank();
        this.nodeSize = iris.node().size();
        this.node = node;
        this.rail = rail;
        this.options = options;
    }

    /**
     * Collective over the whole job: checks that every node holds the same number of ranks, creates
     * the node's {@link Collectives} (where a node has several ranks) and, on several nodes, the
     * NCCL communicators.
     *
     * @throws IllegalArgumentException naming the rank when nodes differ in size
     */
    public static WorldCollectives create(Iris iris) {
        return create(iris, Options.defaults());
    }

    /** {@link #create(Iris)} with the tuning given. */
    public static WorldCollectives create(Iris iris, Options options) {
        if (iris == null) throw new IllegalArgumentException("WorldCollectives.create: iris must not be null");
        if (options == null) throw new IllegalArgumentException("rank " + iris.rank() + ": WorldCollectives.create: options must not be null");
        byte[][] places = iris.allGather(ByteBuffer.allocate(12).putInt(iris.node().size()).putInt(iris.nodeIndex())
                .putInt(iris.node().index()).array());
        int world = places.length;
        int[] nodeSizeOf = new int[world];
        int[] nodeIndexOf = new int[world];
        int[] indexInNodeOf = new int[world];
        for (int r = 0; r < world; r++) {
            ByteBuffer b = ByteBuffer.wrap(places[r]);
            nodeSizeOf[r] = b.getInt();
            nodeIndexOf[r] = b.getInt();
            indexInNodeOf[r] = b.getInt();
        }
        WorldChecks.equalNodes(iris.rank(), "WorldCollectives.create", nodeSizeOf);
        boolean consecutive = WorldChecks.consecutiveNodes(nodeIndexOf, indexInNodeOf, iris.node().size());
        Collectives node = iris.node().size() > 1 ? Collectives.create(iris) : null;
        try {
            NcclCommunicator rail = iris.nodeCount() > 1 ? NcclTeams.of(iris).rail() : null;
            return new WorldCollectives(iris, node, rail, consecutive, options);
        } catch (RuntimeException e) {
            if (node != null) node.close();
            throw e;
        }
    }

    /**
     * {@code out} on every rank = the reduction of every rank's {@code in} (see the class comment
     * for the levels and the rounding), enqueued on {@code stream}.
     */
    public synchronized void allReduce(SymTensor in, SymTensor out, ReduceOp op, Stream stream) {
        final String call = "WorldCollectives.allReduce";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.reduction(rank, call, i, o, op, stream);
        CclChecks.numel(rank, call, o, i.numel(), "the element count of in");
        CclChecks.distinct(rank, call, i, o, "the world all-reduce is out-of-place");
        if (i.numel() % nodeSize != 0) {
            throw TensorChecks.fail(rank, call, "in has " + i.numel() + " elements, which the node size " + nodeSize
                    + " does not divide (each node rank carries one shard between nodes)");
        }
        if (oneLevel(in, out, i.byteSize(), stream, () -> node.allReduce(in, out, op, stream),
                () -> rail.allReduce(in.deviceAddress(), out.deviceAddress(), i.numel(), i.dtype(), op, stream))) {
            return;
        }
        SymTensor shard = shard(in.dtype(), i.numel() / nodeSize);
        long chunk = PipelinedAllReduce.chunkElements(i.numel(), i.dtype().byteSize(), nodeSize, options.pipelineChunkBytes());
        if (chunk < i.numel()) {
            if (pipeline == null) {  // collective, like the shard: every rank's first chunked call is the same call
                pipeline = new PipelinedAllReduce(node, Collectives.create(iris), rail, nodeSize);
            }
            pipeline.run(in, out, shard, op, chunk, stream);
            return;
        }
        node.reduceScatter(in, shard, op, stream);
        rail.allReduce(shard.deviceAddress(), shard.deviceAddress(), shard.numel(), shard.dtype(), op, stream);
        node.allGather(shard, out, stream);
    }

    /**
     * {@code out} on every rank = every rank's {@code in}, one after another in world-rank order
     * (rank r's at elements [r n, (r+1) n), n being {@code in}'s count): a node all-gather on the heap
     * into a node block, then an NCCL all-gather of the node blocks on the rail straight into
     * {@code out}. Any dtype; distinct tensors; nodes of consecutive ranks.
     */
    public synchronized void allGather(SymTensor in, SymTensor out, Stream stream) {
        final String call = "WorldCollectives.allGather";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.allGather(rank, call, i, o, stream, iris.worldSize(), "the world all-gather is out-of-place");
        WorldChecks.requireConsecutive(rank, call, consecutiveNodes);
        if (oneLevel(in, out, i.byteSize(), stream, () -> node.allGather(in, out, stream),
                () -> rail.allGather(in.deviceAddress(), out.deviceAddress(), i.numel(), i.dtype(), stream))) {
            return;
        }
        SymTensor block = shard(in.dtype(), i.numel() * nodeSize);
        node.allGather(in, block, stream);
        rail.allGather(block.deviceAddress(), out.deviceAddress(), block.numel(), block.dtype(), stream);
    }

    /**
     * {@code out} on rank r = the reduction over every rank of elements [r m, (r+1) m) of
     * {@code in}, m being {@code out}'s count: an NCCL reduce-scatter on the rail leaves each rank
     * its node's block reduced across nodes, and a node reduce-scatter on the heap reduces that
     * block within the node. BF16, F16 or F32; distinct tensors; nodes of consecutive ranks.
     * Rounded at most N + 1 times, as the all-reduce (see the class comment).
     */
    public synchronized void reduceScatter(SymTensor in, SymTensor out, ReduceOp op, Stream stream) {
        final String call = "WorldCollectives.reduceScatter";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.reduceScatter(rank, call, i, o, op, stream, iris.worldSize(), "the world reduce-scatter is out-of-place");
        WorldChecks.requireConsecutive(rank, call, consecutiveNodes);
        if (oneLevel(in, out, i.byteSize(), stream, () -> node.reduceScatter(in, out, op, stream),
                () -> rail.reduceScatter(in.deviceAddress(), out.deviceAddress(), o.numel(), o.dtype(), op, stream))) {
            return;
        }
        SymTensor block = shard(in.dtype(), o.numel() * nodeSize);
        rail.reduceScatter(in.deviceAddress(), block.deviceAddress(), block.numel(), block.dtype(), op, stream);
        node.reduceScatter(block, out, op, stream);
    }

    /**
     * {@code tensor} on every rank = world rank {@code root}'s {@code tensor}, in place: an NCCL
     * broadcast on the root's rail (the ranks at the root's index on every node) reaches one rank per
     * node, then a node broadcast on the heap from that rank. Any dtype; nodes of consecutive ranks.
     */
    public synchronized void broadcast(SymTensor tensor, int root, Stream stream) {
        final String call = "WorldCollectives.broadcast";
        ensureOpen(call);
        Operand t = operand(call, "tensor", tensor);
        TensorChecks.notNull(rank, call, "stream", stream);
        CclChecks.root(rank, call, root, iris.worldSize());
        WorldChecks.requireConsecutive(rank, call, consecutiveNodes);
        int rootNode = root / nodeSize;
        int rootIndex = root % nodeSize;
        if (rail != null && iris.node().index() == rootIndex) {
            rail.broadcast(tensor.deviceAddress(), tensor.deviceAddress(), t.numel(), t.dtype(), rootNode, stream);
        }
        if (node != null) {
            node.broadcast(tensor, rootIndex, stream);
        }
    }

    /**
     * Block p of {@code in} (elements [p m, (p+1) m), m = element count / world size) goes to world
     * rank p, where it lands in block r of {@code out} (r: this rank), as {@link #allToAllV} with
     * every count m. Any dtype; distinct tensors of one dtype and element count, divisible by the
     * world size; nodes of consecutive ranks.
     */
    public synchronized void allToAll(SymTensor in, SymTensor out, Stream stream) {
        final String call = "WorldCollectives.allToAll";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.divisible(rank, call, i, iris.worldSize());
        CclChecks.numel(rank, call, o, i.numel(), "the element count of in");
        long[] counts = new long[iris.worldSize()];
        Arrays.fill(counts, i.numel() / iris.worldSize());
        exchange(call, in, counts, out, counts, stream);
    }

    /**
     * All-to-all with per-rank counts across nodes (expert parallelism): this rank sends
     * {@code sendCounts[p]} elements to world rank p, taken from {@code in} one rank after another,
     * and receives {@code recvCounts[q]} elements from world rank q into {@code out} one rank after
     * another, as {@link Collectives#allToAllV} does inside a node. The blocks of this node's ranks
     * move on the heap; the others in one NCCL group of sends and receives on the world
     * communicator. {@code sendCounts[q]} here must equal {@code recvCounts[this rank]} on rank q:
     * inside the node a disagreement is a device error (see {@link Collectives#allToAllV}), between
     * nodes NCCL does not check it and the call may not end. Any dtype; distinct tensors; nodes of
     * consecutive ranks.
     */
    public synchronized void allToAllV(SymTensor in, long[] sendCounts, SymTensor out, long[] recvCounts, Stream stream) {
        exchange("WorldCollectives.allToAllV", in, sendCounts, out, recvCounts, stream);
    }

    private void exchange(String call, SymTensor in, long[] sendCounts, SymTensor out, long[] recvCounts, Stream stream) {
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.allToAllV(rank, call, i, o, stream, "the world all-to-all is out-of-place");
        WorldChecks.requireConsecutive(rank, call, consecutiveNodes);
        int world = iris.worldSize();
        long[] sendDispls = CclChecks.counts(rank, call, "sendCounts", sendCounts, world, i);
        long[] recvDispls = CclChecks.counts(rank, call, "recvCounts", recvCounts, world, o);
        if (sendCounts[rank] != recvCounts[rank]) {
            throw TensorChecks.fail(rank, call, "sendCounts[" + rank + "] = " + sendCounts[rank] + " but recvCounts[" + rank
                    + "] = " + recvCounts[rank] + ": this rank's block to itself must have one count");
        }
        int first = rank - iris.node().index();  // the node's first world rank
        if (rail != null) {
            long[] offNodeSends = sendCounts.clone();
            long[] offNodeRecvs = recvCounts.clone();
            Arrays.fill(offNodeSends, first, first + nodeSize, 0);
            Arrays.fill(offNodeRecvs, first, first + nodeSize, 0);
            NcclTeams.of(iris).world().sendRecv(in.deviceAddress(), sendDispls, offNodeSends, out.deviceAddress(), recvDispls,
                    offNodeRecvs, i.dtype(), stream);
        }
        if (node != null) {
            node.launchAllToAllV(in, Arrays.copyOfRange(sendCounts, first, first + nodeSize),
                    Arrays.copyOfRange(sendDispls, first, first + nodeSize), out,
                    Arrays.copyOfRange(recvCounts, first, first + nodeSize),
                    Arrays.copyOfRange(recvDispls, first, first + nodeSize), stream);
        } else {  // a node of one rank: its block to itself
            Memcpy.deviceToDevice(out.deviceAddress() + recvDispls[rank] * i.dtype().byteSize(),
                    in.deviceAddress() + sendDispls[rank] * i.dtype().byteSize(), sendCounts[rank] * i.dtype().byteSize(), stream);
        }
    }

    /** Collective: releases the shards and the node's collectives; the NCCL communicators stay with Iris. */
    @Override
    public synchronized void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        shards.values().forEach(SymTensor::closeIfLive);
        shards.clear();
        if (pipeline != null) {
            pipeline.close();
        }
        if (node != null) {
            node.close();
        }
    }

    @Override
    public String toString() {
        return "WorldCollectives(rank " + rank + " of " + iris.worldSize() + ", " + iris.nodeCount() + " nodes of "
                + nodeSize + (closed.get() ? ", closed" : "") + ")";
    }

    /**
     * Does the call where it needs one level or none; false where both levels take part. A job of
     * one rank copies in to out (every collective of one rank is that copy: the mean of one value is
     * that value); a job of one node runs {@code nodeOnly}, one of one rank per node {@code railOnly}.
     */
    private boolean oneLevel(SymTensor in, SymTensor out, long bytes, Stream stream, Runnable nodeOnly, Runnable railOnly) {
        if (node == null && rail == null) {
            Memcpy.deviceToDevice(out.deviceAddress(), in.deviceAddress(), bytes, stream);
        } else if (rail == null) {
            nodeOnly.run();
        } else if (node == null) {
            railOnly.run();
        } else {
            return false;
        }
        return true;
    }

    /** A heap buffer of this dtype and size between the levels; the first request allocates it (collective). */
    private SymTensor shard(DType dtype, long numel) {
        return shards.computeIfAbsent(dtype + "x" + numel, k -> iris.heap().empty(dtype, numel));
    }

    private Operand operand(String call, String name, SymTensor t) {
        TensorChecks.notNull(rank, call, name, t);
        Operand o = new Operand(name, t.dtype(), t.numel(), t.isLive(), t.heap() == iris.heap(), t.heapOffset(), t);
        CclChecks.usable(rank, call, o);
        return o;
    }

    private void ensureOpen(String call) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + call + " after close()");
        }
    }
}

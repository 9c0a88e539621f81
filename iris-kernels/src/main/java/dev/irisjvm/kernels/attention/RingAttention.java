package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DeviceBarrier;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Team;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.NodeTeamOperations;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sequence-parallel attention forward over a team of ranks (ring attention): the ranks of this
 * rank's node ({@link Iris#node()}, the default: every rank on a job of one node), or every rank of
 * a job of several nodes ({@link Iris#world()}); "rank" and "world" below are the team's. Q, K
 * and V are sharded by sequence, each rank holding {@code S / world} tokens of every sequence on the
 * symmetric heap; each rank computes the attention of its queries against the whole sequence and
 * writes its rows of O and of the log-sum-exp. K/V memory per rank stays O(S / world): the rank's own
 * shard plus one receive buffer of one shard on two ranks, two on more.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init()) {
 *     int world = iris.node().size(), shard = 32768 / world;          // S = 32K
 *     AttentionProblem p = AttentionProblem.of(DType.BF16, 1, 32, 8, shard, shard, 128, true);
 *     SymmetricHeap heap = iris.heap();
 *     SymTensor q = heap.randn(DType.BF16, 1, 32, shard, 128);      // this rank's shard (zig-zag)
 *     SymTensor k = heap.randn(DType.BF16, 1, 8, shard, 128);
 *     SymTensor v = heap.randn(DType.BF16, 1, 8, shard, 128);
 *     SymTensor o = heap.empty(DType.BF16, 1, 32, shard, 128);
 *     SymTensor lse = heap.empty(DType.F32, 1, 32, shard);
 *     try (RingAttention ring = RingAttention.create(iris, p, Sharding.ZIG_ZAG)) {
 *         ring.forward(q, k, v, o, lse, iris.stream());             // every rank calls it
 *         iris.synchronize();
 *     }
 * }
 * }</pre>
 *
 * <h2>How</h2>
 * Step {@code s = 0 .. world-1} computes this rank's Q shard against the K/V shard of rank
 * {@code (rank - s) mod world}: step 0 reads the own shard in place, every later step a copy in a
 * receive buffer (two, used in turn). While a step runs on the caller's stream, the copy engine
 * fetches the next source's K and V from that rank's heap (a device-to-device copy on a second
 * stream, reading through the symmetric-heap translation) into the other buffer. Events order it
 * all: the copy into a buffer waits for the step that last read it; a step waits for its copy.
 * Steps before the last two are launches of the ring-step kernel ({@link RingStep}), which carry
 * the online-softmax state (un-normalized O in F32, the running max and sum per row) in this
 * instance's workspace. The last two steps are one launch ({@link RingLastSteps}): it reads step
 * {@code world-2}'s shard, then the last one, whose copy may still be in flight when the launch
 * starts; a stream write behind that copy raises the flag the kernel waits for before it reads the
 * shard, so the copy hides under the first half and neither the state nor a second tail wave is
 * paid between the two. On two ranks that is the whole call: the own shard, then the peer's. On the
 * portable mainloop ({@link Attention#mainloop()}), which has no such launch, the last two steps
 * are two step launches, the second after its copy in stream order; the state then lives in the
 * workspace from two ranks on. A device barrier opens the call (the peers' shards are written) and
 * one closes it (the peers have finished reading this rank's shards, so they may be overwritten).
 * With a causal mask the kernel compares global positions, which {@link Sharding} defines; K/V
 * tiles a query tile cannot see are skipped.
 *
 * <h2>Across nodes</h2>
 * Over {@link Iris#world()} a source on this rank's node is copied from its heap as above; a source
 * on another node comes by NCCL on the same copy stream (a group of one send and one receive per
 * step: this rank sends its own shard to the rank that needs it at that step, {@code rank + s}, and
 * receives from {@code rank - s}), so it overlaps the steps running on the caller's stream as the
 * copies do. Every rank pulls its sources straight from their owners rather than forwarding what it
 * received, so the hops between nodes spread over every rank's network link. The last launch then
 * starts after that transfer (NCCL's kernel needs SMs that the waiting launch would hold).
 *
 * <pre>{@code
 * try (RingAttention ring = RingAttention.create(iris, attention, p, Sharding.ZIG_ZAG, iris.world())) {
 *     ring.forward(q, k, v, o, lse, iris.stream());   // shards of S / iris.worldSize() tokens
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>Collective: every rank creates the instance with the same problem and sharding, and calls
 *     {@code forward} the same number of times, in the same order.</li>
 * <li>{@code shard} is one rank's shapes: qLen = kvLen = S / world; causal compares global
 *     positions as {@code sharding} places them (zig-zag needs a shard length multiple of 256).</li>
 * <li>K and V must be on the symmetric heap (the peers read them); Q, O and the log-sum-exp may be
 *     any device memory of this process.</li>
 * <li>Everything is stream-ordered, without host synchronization or device allocation: a call may
 *     be captured into a CUDA graph (together with its barriers) and replayed. Consecutive calls on
 *     different streams must be ordered by the caller (they share the workspace).</li>
 * </ul>
 */
public final class RingAttention implements AutoCloseable {
    /** Alignment of the workspace's parts. */
    static final long PART_ALIGNMENT = 256;

    private final Iris iris;
    private final Attention attention;
    private final boolean ownsAttention;
    private final AttentionProblem shard;
    private final Sharding sharding;
    /** The ranks of the ring: the node, or the world of a job of several nodes. */
    private final Team team;
    private final int rank;
    private final int world;
    /** The world communicator for sources on other nodes; null when the ring stays on this node. */
    private final NcclCommunicator crossNode;
    private final Chunks[] chunksOf;
    private final DeviceMemory workspace;
    private final long oAcc;
    private final long rowMax;
    private final long rowSum;
    /** Receive buffers, K then V in each: step s >= 1 reads buffer (s - 1) % 2. */
    private final long[] receiveK = new long[2];
    private final long[] receiveV = new long[2];
    /** The 64-bit word the last launch waits on: 1 once the last shard is copied, reset to 0 after. */
    private final long lastShardReady;
    private final Stream copyStream;
    /** Its own device barrier, so that its barriers pair only with its own on the peers. */
    private final DeviceBarrier barrier;
    /**
     * Where the last shard's owner (rank + 1) shares this rank's GPU, its copy is a copy inside one
     * GPU, which the GPU runs as a kernel on the SMs; the last launch fills every SM while it waits
     * for the ready word, so it must not start before that copy is done.
     */
    private final boolean lastCopyNeedsSms;
    private final Event start;
    private final Event[] copied = new Event[2];
    private final Event[] readDone = new Event[2];
    private final AtomicBoolean closed = new AtomicBoolean();

    private RingAttention(Iris iris, Attention attention, boolean ownsAttention, AttentionProblem shard, Sharding sharding,
                          Team team, List<AutoCloseable> made) {
        this.iris = iris;
        this.attention = attention;
        this.ownsAttention = ownsAttention;
        this.shard = shard;
        this.sharding = sharding;
        this.team = team;
        this.rank = team.index();
        this.world = team.size();
        this.crossNode = team.size() > iris.node().size() ? NcclTeams.of(iris).world() : null;
        this.chunksOf = new Chunks[world];
        for (int r = 0; r < world; r++) {
            chunksOf[r] = sharding.chunks(r, world, shard.qLen());
        }
        long[] layout = layout(shard, world, attention.mainloop() == GemmMainloop.HOPPER);
        long bytes = layout[layout.length - 1];
        workspace = bytes > 0 ? DeviceMemory.allocate(bytes) : null;
        if (workspace != null) {
            made.add(workspace);
        }
        long[] at = new long[layout.length - 1];
        for (int i = 0; i < at.length; i++) {
            boolean present = layout[i + 1] > layout[i];
            at[i] = present ? workspace.address() + layout[i] : 0;
        }
        oAcc = at[0];
        rowMax = at[1];
        rowSum = at[2];
        for (int b = 0; b < 2; b++) {
            receiveK[b] = at[3 + 2 * b];
            receiveV[b] = at[4 + 2 * b];
        }
        lastShardReady = at[7];
        copyStream = Stream.create();
        made.add(copyStream);
        barrier = iris.newBarrier();
        made.add(barrier);
        lastCopyNeedsSms = lastShardReady != 0 && lastCopyNeedsSms(iris, team.worldRank((rank + 1) % world));
        if (lastShardReady != 0) {
            // The kernel reads the whole word; stream writes set its low half.
            Memcpy.memset(lastShardReady, 0, 8, copyStream);
            copyStream.synchronize();
        }
        start = Event.untimed();
        made.add(start);
        for (int b = 0; b < 2; b++) {
            copied[b] = Event.untimed();
            made.add(copied[b]);
            readDone[b] = Event.untimed();
            made.add(readDone[b]);
        }
    }

    /**
     * Offsets of the workspace's parts (oAcc, rowMax, rowSum, K0, V0, K1, V1, the last shard's
     * ready word) and, last, its size; a part the world does not need takes no bytes: one rank needs
     * nothing, two need one receive buffer and, with {@code lastTwoInOne} (Hopper's last-steps
     * launch), the word (their one launch keeps the state in registers) or else the state; more need
     * the state and two buffers, and the word with {@code lastTwoInOne}.
     */
    static long[] layout(AttentionProblem shard, int world, boolean lastTwoInOne) {
        long state = world > (lastTwoInOne ? 2 : 1) ? 1 : 0;
        long firstBuffer = world > 1 ? shard.kvBytes() : 0;
        long secondBuffer = world > 2 ? shard.kvBytes() : 0;
        long[] sizes = {state * shard.qRows() * shard.headDim() * 4, state * shard.qRows() * 4, state * shard.qRows() * 4,
                firstBuffer, firstBuffer, secondBuffer, secondBuffer, world > 1 && lastTwoInOne ? 8 : 0};
        long[] out = new long[sizes.length + 1];
        long at = 0;
        for (int i = 0; i < sizes.length; i++) {
            out[i] = at;
            at += (sizes[i] + PART_ALIGNMENT - 1) / PART_ALIGNMENT * PART_ALIGNMENT;
        }
        out[sizes.length] = at;
        return out;
    }

    /** {@link #create(Iris, Attention, AttentionProblem, Sharding)} with an {@link Attention} of its own. */
    public static RingAttention create(Iris iris, AttentionProblem shard, Sharding sharding) {
        Attention attention = Attention.create();
        try {
            return create(iris, attention, true, shard, sharding);
        } catch (RuntimeException | Error e) {
            attention.close();
            throw e;
        }
    }

    /**
     * Collective: sets up ring attention over this rank's node for shards shaped {@code shard} (qLen
     * = kvLen = S / world), allocating this rank's workspace (the state and two K/V receive buffers,
     * {@link #workspaceBytes()}) and a copy stream. {@code attention} is used, not owned.
     */
    public static RingAttention create(Iris iris, Attention attention, AttentionProblem shard, Sharding sharding) {
        return create(iris, attention, false, shard, sharding, iris == null ? null : iris.node());
    }

    /**
     * Collective over {@code team}: {@link Iris#node()}, as {@link #create(Iris, Attention,
     * AttentionProblem, Sharding)}, or {@link Iris#world()}, a ring through every rank of the job
     * whose hops between nodes go through NCCL (the world communicator of {@link NcclTeams}, created
     * on first use). Shards are S / team size tokens.
     */
    public static RingAttention create(Iris iris, Attention attention, AttentionProblem shard, Sharding sharding, Team team) {
        return create(iris, attention, false, shard, sharding, team);
    }

    private static RingAttention create(Iris iris, Attention attention, boolean owns, AttentionProblem shard, Sharding sharding) {
        return create(iris, attention, owns, shard, sharding, iris == null ? null : iris.node());
    }

    private static RingAttention create(Iris iris, Attention attention, boolean owns, AttentionProblem shard, Sharding sharding,
                                        Team team) {
        String op = "ring attention";
        AttentionChecks.notNull(op, "iris", iris);
        AttentionChecks.notNull(op, "attention", attention);
        AttentionChecks.notNull(op, "shard", shard);
        AttentionChecks.notNull(op, "sharding", sharding);
        AttentionChecks.notNull(op, "team", team);
        if (!team.equals(iris.node()) && !team.equals(iris.world())) {
            throw AttentionChecks.fail(op, "team " + team + " is neither iris.node() nor iris.world(); the ring spans one of them");
        }
        if (team.equals(iris.node())) {
            NodeTeamOperations.requirePeers(iris, "RingAttention");  // over the world, nodes of one rank are fine
        }
        checkShard(shard, sharding, team.index(), team.size());
        if (!attention.hasRingStep()) {
            attention.ringStep(null, null);  // throws, saying why
        }
        List<AutoCloseable> made = new ArrayList<>();
        try {
            return new RingAttention(iris, attention, owns, shard, sharding, team, made);
        } catch (RuntimeException | Error e) {
            Collections.reverse(made);
            Resources.closeAfter(e, made);
            throw e;
        }
    }

    /**
     * Whether the copy of the last shard, from world rank {@code owner}, runs on SMs: a copy inside
     * one GPU runs as a kernel, and so does NCCL's transfer from another node.
     */
    private static boolean lastCopyNeedsSms(Iris iris, int owner) {
        Team node = iris.node();
        return !node.contains(owner) || iris.pciAddressOf(node.indexOf(owner)).equals(iris.pciAddressOf(node.index()));
    }

    /** The rules on a shard's shapes: equal Q and K/V lengths, and what the sharding needs. */
    static void checkShard(AttentionProblem shard, Sharding sharding, int rank, int world) {
        String op = "ring attention";
        if (shard.qLen() != shard.kvLen()) {
            throw AttentionChecks.fail(op, "shard qLen = " + shard.qLen() + " and kvLen = " + shard.kvLen()
                    + " differ; Q, K and V are sharded alike (S / world tokens each)");
        }
        sharding.check(op, rank, world, shard.qLen());
    }

    // ---- facts -------------------------------------------------------------------------------------

    /** One rank's shapes. */
    public AttentionProblem shard() {
        return shard;
    }

    public Sharding sharding() {
        return sharding;
    }

    /** Global chunks of rank {@code r}'s shard. */
    public Chunks chunks(int r) {
        return chunksOf[r];
    }

    /**
     * Bytes of this rank's workspace: the K/V receive buffers (one on two ranks, two on more), the
     * F32 state (more than two ranks) and a flag word; 0 for one rank.
     */
    public long workspaceBytes() {
        return workspace == null ? 0 : workspace.bytes();
    }

    /**
     * K/V bytes this rank holds during a call: its own K and V shards plus the receive buffers,
     * {@link AttentionProblem#kvBytes()} times 2 for one rank, 4 for two, 6 for more: O(S / world).
     */
    public long kvBytesPerRank() {
        return 2L * (1 + Math.min(world - 1, 2)) * shard.kvBytes();
    }

    // ---- calls -------------------------------------------------------------------------------------

    /**
     * Ring attention on shards held in symmetric tensors: {@code q} [B, Hq, S/W, D], {@code k} and
     * {@code v} [B, Hkv, S/W, D], {@code o} like q, {@code lse} [B, Hq, S/W] F32 or null, shaped as
     * this instance's shard problem says.
     */
    public void forward(SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse, Stream stream) {
        AttentionProblem p = AttentionChecks.tensors(Attention.operand("q", q), Attention.operand("k", k),
                Attention.operand("v", v), Attention.operand("o", o), Attention.operand("lse", lse), shard.causal(), shard.scale());
        if (!p.equals(shard)) {
            throw AttentionChecks.fail("ring attention", "the tensors describe " + p + "; this instance was created for " + shard);
        }
        forward(q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(), lse == null ? 0 : lse.deviceAddress(),
                stream);
    }

    /**
     * Ring attention on addresses laid out as the shard problem says; {@code k} and {@code v} are
     * this rank's symmetric-heap addresses of its K and V shards; {@code lse} may be 0.
     */
    public synchronized void forward(long q, long k, long v, long o, long lse, Stream stream) {
        if (closed.get()) {
            throw new IllegalStateException(AttentionChecks.who("ring attention") + ": RingAttention used after close()");
        }
        String op = "ring attention";
        AttentionChecks.notNull(op, "stream", stream);
        AttentionChecks.buffers(shard, q, k, v, o, lse);
        DeviceContext ctx = iris.deviceContext();
        long heapBase = ctx.heapBase(ctx.rank());   // the context counts node ranks; rank is the team's
        long heapEnd = heapBase + iris.heap().capacity();
        onHeap("K", k, shard.kvBytes(), heapBase, heapEnd);
        onHeap("V", v, shard.kvBytes(), heapBase, heapEnd);
        Chunks mine = chunksOf[rank];
        if (world == 1) {
            attention.ringStep(new RingStep(shard, q, k, v, o, lse, 0, 0, 0, false, true, mine, mine), stream);
            return;
        }
        // Build every launch first, so that a bad argument fails before anything is enqueued. Steps
        // 0 .. last - 1 are ring-step launches; steps last and last + 1 are the one last launch on
        // Hopper, two step launches on the portable mainloop (lastTwo null).
        int last = world - 2;
        boolean lastTwoInOne = lastShardReady != 0;
        RingStep[] steps = new RingStep[world];
        for (int s = 0; s < world; s++) {
            int src = Math.floorMod(rank - s, world);
            long kAt = s == 0 ? k : receiveK[(s - 1) % 2];
            long vAt = s == 0 ? v : receiveV[(s - 1) % 2];
            boolean finalizes = s == (lastTwoInOne ? last : world - 1);
            steps[s] = s > last && lastTwoInOne ? null
                    : new RingStep(shard, q, kAt, vAt, o, lse, oAcc, rowMax, rowSum, s > 0, finalizes, mine, chunksOf[src]);
        }
        int lastBuffer = last % 2;
        RingLastSteps lastTwo = lastTwoInOne ? new RingLastSteps(steps[last], receiveK[lastBuffer], receiveV[lastBuffer],
                chunksOf[Math.floorMod(rank + 1, world)], lastShardReady) : null;
        barrier.enqueue(stream);           // every rank's shards are written
        start.record(stream);
        copyStream.waitFor(start);
        for (int s = 0; s <= last; s++) {
            // The copy for step s + 1, from rank (rank - s - 1) mod world into buffer s % 2, which step
            // s - 1 read last.
            int b = s % 2;
            if (s - 1 >= 1) {
                copyStream.waitFor(readDone[b]);
            }
            fetch(k, v, s + 1, b, ctx);
            if (s == last && lastTwoInOne) {
                copyStream.writeValue32(lastShardReady, 1);   // the last launch reads the shard after this
            }
            copied[b].record(copyStream);
            if (s > 0) {
                stream.waitFor(copied[(s - 1) % 2]);
            }
            if (s < last) {
                attention.ringStep(steps[s], stream);
                if (s > 0) {
                    readDone[(s - 1) % 2].record(stream);
                }
            } else if (lastTwoInOne) {
                if (lastCopyNeedsSms) {
                    stream.waitFor(copied[b]);
                }
                attention.ringLastSteps(ctx, lastTwo, stream);
            } else {
                attention.ringStep(steps[last], stream);
                stream.waitFor(copied[b]);
                attention.ringStep(steps[last + 1], stream);
            }
        }
        stream.waitFor(copied[lastBuffer]);   // joins the copy stream
        if (lastTwoInOne) {
            stream.writeValue32(lastShardReady, 0);
        }
        barrier.enqueue(stream);           // every rank has finished reading this rank's shards
    }

    /**
     * Enqueues on the copy stream what step {@code step} needs in receive buffer {@code b}: the shard
     * of rank {@code rank - step}, copied from its heap when it is on this node, else received by
     * NCCL; and this rank's own shard sent to rank {@code rank + step} when that one is on another
     * node (it receives in the same step).
     */
    private void fetch(long k, long v, int step, int b, DeviceContext ctx) {
        Team node = iris.node();
        int from = team.worldRank(Math.floorMod(rank - step, world));
        int to = team.worldRank(Math.floorMod(rank + step, world));
        long bytes = shard.kvBytes();
        if (node.contains(from)) {
            // The peer's shard is mapped into this rank's address space, so a plain device-to-device
            // copy runs on the copy engine over NVLink and, unlike a peer copy, can be captured in a graph.
            Memcpy.deviceToDevice(receiveK[b], ctx.translate(k, node.indexOf(from)), bytes, copyStream);
            Memcpy.deviceToDevice(receiveV[b], ctx.translate(v, node.indexOf(from)), bytes, copyStream);
        }
        if (node.contains(from) && node.contains(to)) {
            return;
        }
        long[] sendCounts = new long[crossNode.size()];
        long[] recvCounts = new long[crossNode.size()];
        long[] offsets = new long[crossNode.size()];
        if (!node.contains(to)) {
            sendCounts[to] = bytes;
        }
        if (!node.contains(from)) {
            recvCounts[from] = bytes;
        }
        crossNode.sendRecv(k, offsets, sendCounts, receiveK[b], offsets, recvCounts, DType.U8, copyStream);
        crossNode.sendRecv(v, offsets, sendCounts, receiveV[b], offsets, recvCounts, DType.U8, copyStream);
    }

    private static void onHeap(String name, long address, long bytes, long heapBase, long heapEnd) {
        if (address < heapBase || address + bytes > heapEnd) {
            throw AttentionChecks.fail("ring attention", name + " [0x" + Long.toHexString(address) + ", +" + bytes
                    + " bytes) is not inside this rank's symmetric heap [0x" + Long.toHexString(heapBase) + ", 0x"
                    + Long.toHexString(heapEnd) + "); the peers read K and V through the heap");
        }
    }

    /** Frees the workspace, the copy stream and the events (synchronize first). Safe to call twice. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(start, copied[0], copied[1], readDone[0], readDone[1], copyStream, barrier, workspace,
                ownsAttention ? attention : null);
    }

    @Override
    public String toString() {
        return "RingAttention(rank " + rank + " of " + world + (crossNode != null ? " across nodes" : "") + ", "
                + attention.mainloop() + ", " + sharding + ", shard " + shard + ", workspace "
                + workspaceBytes() + " bytes" + (closed.get() ? ", closed" : "") + ")";
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.Resources;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.Memcpy;
import dev.irisjvm.core.gpu.Stream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sequence-parallel attention forward over the ranks of an {@link Iris} job (ring attention): Q, K
 * and V are sharded by sequence, each rank holding {@code S / world} tokens of every sequence on the
 * symmetric heap; each rank computes the attention of its queries against the whole sequence and
 * writes its rows of O and of the log-sum-exp. K/V memory per rank stays O(S / world): the rank's own
 * shard plus two receive buffers of one shard each.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init()) {
 *     int world = iris.worldSize(), shard = 32768 / world;          // S = 32K
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
 * Step {@code s = 0 .. world-1} runs the ring-step kernel ({@link RingStep}) of this rank's Q shard
 * against the K/V shard of rank {@code (rank - s) mod world}: step 0 reads the own shard in place,
 * every later step a copy in one of two receive buffers. While step {@code s} runs on the caller's
 * stream, the copy engine fetches the next source's K and V from that rank's heap (a peer-to-peer
 * copy on a second stream, reading through the symmetric-heap translation) into the other buffer.
 * Events order it all: the copy into a buffer waits for the step that last read it; a step waits for
 * its copy. The online-softmax state (un-normalized O in F32, the running max and sum per row) lives
 * in this instance's workspace between steps; the last step writes O and the log-sum-exp. A device
 * barrier opens the call (the peers' shards are written) and one closes it (the peers have finished
 * reading this rank's shards, so they may be overwritten). With a causal mask the kernel compares
 * global positions, which {@link Sharding} defines; K/V tiles a query tile cannot see are skipped.
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
    private final int rank;
    private final int world;
    private final Chunks[] chunksOf;
    private final DeviceMemory workspace;
    private final long oAcc;
    private final long rowMax;
    private final long rowSum;
    /** Receive buffers, K then V in each. */
    private final long[] receiveK = new long[2];
    private final long[] receiveV = new long[2];
    private final Stream copyStream;
    private final Event start;
    private final Event[] copied = new Event[2];
    private final Event[] readDone = new Event[2];
    private final AtomicBoolean closed = new AtomicBoolean();

    private RingAttention(Iris iris, Attention attention, boolean ownsAttention, AttentionProblem shard, Sharding sharding,
                          List<AutoCloseable> made) {
        this.iris = iris;
        this.attention = attention;
        this.ownsAttention = ownsAttention;
        this.shard = shard;
        this.sharding = sharding;
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.chunksOf = new Chunks[world];
        for (int r = 0; r < world; r++) {
            chunksOf[r] = sharding.chunks(r, world, shard.qLen());
        }
        long[] layout = layout(shard, world);
        if (layout[layout.length - 1] > 0) {
            workspace = DeviceMemory.allocate(layout[layout.length - 1]);
            made.add(workspace);
        } else {
            workspace = null;
        }
        long base = workspace == null ? 0 : workspace.address();
        oAcc = world > 1 ? base + layout[0] : 0;
        rowMax = world > 1 ? base + layout[1] : 0;
        rowSum = world > 1 ? base + layout[2] : 0;
        for (int b = 0; b < 2; b++) {
            receiveK[b] = world > 1 ? base + layout[3 + 2 * b] : 0;
            receiveV[b] = world > 1 ? base + layout[4 + 2 * b] : 0;
        }
        copyStream = Stream.create();
        made.add(copyStream);
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
     * Offsets of the workspace's parts (oAcc, rowMax, rowSum, K0, V0, K1, V1) and, last, its size;
     * all zero for a world of one (a single step needs neither state nor buffers).
     */
    static long[] layout(AttentionProblem shard, int world) {
        long[] sizes = {shard.qRows() * shard.headDim() * 4, shard.qRows() * 4, shard.qRows() * 4, shard.kvBytes(),
                shard.kvBytes(), shard.kvBytes(), shard.kvBytes()};
        long[] out = new long[sizes.length + 1];
        if (world == 1) {
            return out;
        }
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
     * Collective: sets up ring attention for shards shaped {@code shard} (qLen = kvLen = S / world),
     * allocating this rank's workspace (the state and two K/V receive buffers, {@link
     * #workspaceBytes()}) and a copy stream. {@code attention} is used, not owned.
     */
    public static RingAttention create(Iris iris, Attention attention, AttentionProblem shard, Sharding sharding) {
        return create(iris, attention, false, shard, sharding);
    }

    private static RingAttention create(Iris iris, Attention attention, boolean owns, AttentionProblem shard, Sharding sharding) {
        String op = "ring attention";
        AttentionChecks.notNull(op, "iris", iris);
        AttentionChecks.notNull(op, "attention", attention);
        AttentionChecks.notNull(op, "shard", shard);
        AttentionChecks.notNull(op, "sharding", sharding);
        checkShard(shard, sharding, iris.rank(), iris.worldSize());
        if (!attention.hasRingStep()) {
            attention.ringStep(null, null);  // throws, saying why
        }
        List<AutoCloseable> made = new ArrayList<>();
        try {
            return new RingAttention(iris, attention, owns, shard, sharding, made);
        } catch (RuntimeException | Error e) {
            Collections.reverse(made);
            Resources.closeAfter(e, made);
            throw e;
        }
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

    /** Bytes of this rank's workspace: the F32 state and two K/V receive buffers (0 for one rank). */
    public long workspaceBytes() {
        return workspace == null ? 0 : workspace.bytes();
    }

    /**
     * K/V bytes this rank holds during a call: its own K and V shards plus the two receive buffers,
     * 6 x {@link AttentionProblem#kvBytes()} (2 x for one rank): O(S / world).
     */
    public long kvBytesPerRank() {
        return (world > 1 ? 6 : 2) * shard.kvBytes();
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
        long heapBase = ctx.heapBase(rank);
        long heapEnd = heapBase + iris.heap().capacity();
        onHeap("K", k, shard.kvBytes(), heapBase, heapEnd);
        onHeap("V", v, shard.kvBytes(), heapBase, heapEnd);
        Chunks mine = chunksOf[rank];
        if (world == 1) {
            attention.ringStep(new RingStep(shard, q, k, v, o, lse, 0, 0, 0, false, true, mine, mine), stream);
            return;
        }
        // Build every step first, so that a bad argument fails before anything is enqueued.
        RingStep[] steps = new RingStep[world];
        for (int s = 0; s < world; s++) {
            int src = Math.floorMod(rank - s, world);
            long kAt = s == 0 ? k : receiveK[s % 2];
            long vAt = s == 0 ? v : receiveV[s % 2];
            steps[s] = new RingStep(shard, q, kAt, vAt, o, lse, oAcc, rowMax, rowSum, s > 0, s == world - 1, mine, chunksOf[src]);
        }
        long bytes = shard.kvBytes();

        iris.barrier(stream);              // every rank's shards are written
        start.record(stream);
        copyStream.waitFor(start);
        for (int s = 0; s < world; s++) {
            if (s + 1 < world) {
                int next = Math.floorMod(rank - s - 1, world);
                int b = (s + 1) % 2;
                if (s - 1 >= 1) {
                    copyStream.waitFor(readDone[b]);   // step s - 1 read buffer b
                }
                // The peer's shard is mapped into this rank's address space, so a plain device-to-device
                // copy runs on the copy engine over NVLink and, unlike a peer copy, can be captured in a graph.
                Memcpy.deviceToDevice(receiveK[b], ctx.translate(k, next), bytes, copyStream);
                Memcpy.deviceToDevice(receiveV[b], ctx.translate(v, next), bytes, copyStream);
                copied[b].record(copyStream);
            }
            if (s > 0) {
                stream.waitFor(copied[s % 2]);
            }
            attention.ringStep(steps[s], stream);
            if (s > 0) {
                readDone[s % 2].record(stream);
            }
        }
        iris.barrier(stream);              // every rank has finished reading this rank's shards
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
        Resources.closeAll(start, copied[0], copied[1], readDone[0], readDone[1], copyStream, workspace,
                ownsAttention ? attention : null);
    }

    @Override
    public String toString() {
        return "RingAttention(rank " + rank + " of " + world + ", " + sharding + ", shard " + shard + ", workspace "
                + workspaceBytes() + " bytes" + (closed.get() ? ", closed" : "") + ")";
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceBarrier;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.NodeTeamOperations;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Distributed flash-decode: attention of one new token per sequence against a KV cache whose
 * tokens are split across the ranks of a node ({@link dev.irisjvm.core.Iris#node()}, every rank on a
 * job of one node; creation refuses a node of one rank in a job of several) ({@code flash_decode.cu}). Each rank computes partials over its
 * part of every sequence; the fused kernel stores each partial straight into every rank's symmetric
 * partials buffer, counts arrivals with a system-scope flag per (sequence, K/V head), and on every
 * rank the first CTAs of each (sequence, head) wait for all ranks' partials and combine them, a
 * query head each: every rank ends with the full output, in one launch. A waiting CTA never
 * depends on a CTA of its own grid that has not started (SMs held by other work: another stream,
 * another process, an MPS limit): each CTA claims its chunk as it starts, and a waiting one
 * computes the chunks nobody has claimed itself.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init()) {
 *     int len = 65536 / iris.node().size();                              // 64K tokens per sequence in all
 *     FlashDecodeProblem max = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, len,
 *             FlashDecodeProblem.defaultChunkLen(8, 8, len, iris.deviceProperties().multiprocessorCount()));
 *     try (FlashDecode decode = FlashDecode.create(iris, max)) {     // collective: symmetric workspace
 *         SymTensor q = heap.randn(DType.BF16, 8, 32, 128);              // [batch, qHeads, headDim]
 *         SymTensor k = heap.randn(DType.BF16, 8, 8, len, 128);          // this rank's tokens
 *         SymTensor v = heap.randn(DType.BF16, 8, 8, len, 128);
 *         SymTensor o = heap.empty(DType.BF16, 8, 32, 128);              // the full result, on every rank
 *         decode.forward(q, k, v, o, iris.stream());                     // fused
 *         decode.conventional(q, k, v, o, iris.stream());                // partial, merge, all-gather, combine
 *         decode.baseline(q, k, v, o, iris.stream());                    // partial, all-gather, combine
 *         iris.synchronize();
 *     }
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@code o[b, h] = sum_j softmax_j(scale q[b,h] . k[b,h/G,j]) v[b,h/G,j]} over the tokens of
 *     every rank (rank order does not matter); scores, partials and the combination are F32, o is
 *     rounded once.</li>
 * <li>Collective: every rank calls {@code forward} (or {@code conventional}, or {@code baseline}) the
 *     same number of times, in the same order, with the same shapes and the same {@code len}; the
 *     arguments are checked as {@link FlashDecodeProblem} says. q, k and v may be any device memory
 *     of this process; the workspace is this instance's.</li>
 * <li>{@link #forward} is one kernel, stream-ordered, no host synchronization. Odd and even calls use
 *     two sets of partials and counters, so no barrier is needed between calls: a rank that starts
 *     a call has received every peer's partials of the previous one, so every peer has finished the
 *     call before that, the last reader of the set this call writes. Each
 *     call passes its call number ({@code epoch}) by value, so a CUDA graph of a call replays that
 *     number: capture and replay are not supported for {@link #forward} (they are for {@link
 *     #conventional} and {@link #baseline} with a gather that supports them).</li>
 * <li>{@link #conventional} is the unfused decode as it is usually built, the baseline the fused
 *     kernel is measured against: the partial kernel, the merge kernel (this rank's chunks into one
 *     (output, log-sum-exp) entry per query head), an all-gather of those entries (by default
 *     copy-engine reads of every peer's entries between two device barriers; the benchmarks pass
 *     NCCL), then the combine kernel over one entry per rank.</li>
 * <li>{@link #baseline} gathers every chunk's partial instead, about {@code chunks} times the bytes,
 *     and combines them all: the same combination as the fused kernel's, to its last bit.</li>
 * </ul>
 *
 * <p>The four kernels take one argument struct, {@code iris_flash_decode_args}
 * (iris/abi/flash_decode.h, which also declares the launch constants and the partials' layout
 * used here), filled per call by {@link FlashDecodeArgs}.
 */
public final class FlashDecode implements AutoCloseable {
    /** The kernel module ({@code flash_decode.cu}). */
    public static final String MODULE = "flash_decode";
    /** What the kernels need that the HIP build lacks (their reductions assume 32-lane warps); any NVIDIA GPU Iris runs on has it. */
    public static final String REQUIREMENT = "32-lane warp shuffles";
    /** Threads per CTA of all four kernels. */
    public static final int THREADS = KernelAbi.IRIS_FLASH_DECODE_THREADS;

    /**
     * Gathers every rank's partials (or merged entries): {@code floats} F32 values at {@code send} on
     * each rank into {@code recv} on every rank, rank r's at {@code recv + r x floats x 4},
     * stream-ordered on {@code stream}. {@code send} is this rank's symmetric address; {@code recv}
     * holds world slots.
     */
    @FunctionalInterface
    public interface PartialsGather {
        void allGather(long send, long recv, long floats, Stream stream);
    }

    private final Iris iris;
    private final FlashDecodeProblem max;
    private final KernelLibrary library;
    private final Map<String, Kernel> kernels = new HashMap<>();
    private final SymTensor partials;
    private final SymTensor send;
    private final SymTensor gathered;
    private final SymTensor arrived;
    private final SymTensor mergedSend;
    private final SymTensor mergedGathered;
    /** Its own device barrier, so that its barriers pair only with its own on the peers. */
    private final DeviceBarrier barrier;
    private final FlashDecodeArgs args;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Fused calls since the arrival counters were last zeroed, and their chunk count. */
    private long callsSinceReset;
    private int chunksSinceReset;
    private long calls;
    private long resets;

    private FlashDecode(Iris iris, FlashDecodeProblem max, KernelLibrary library) {
        this.iris = iris;
        this.max = max;
        this.library = library;
        KernelModule module = library.module(MODULE);
        for (DType t : new DType[] {DType.BF16, DType.F16}) {
            for (int d : new int[] {64, 128}) {
                for (String prefix : new String[] {"iris_flash_decode_", "iris_flash_decode_partial_", "iris_flash_decode_combine_"}) {
                    String name = FlashDecodeProblem.kernelName(prefix, t, d);
                    kernels.put(name, module.kernel(name));
                }
            }
        }
        for (int d : new int[] {64, 128}) {
            String name = FlashDecodeProblem.mergeKernelName(d);
            kernels.put(name, module.kernel(name));
        }
        long slot = max.slotFloats();
        long entries = max.mergedFloats();
        int world = iris.node().size();
        SymTensor p = null;
        SymTensor s = null;
        SymTensor g = null;
        SymTensor a = null;
        SymTensor ms = null;
        SymTensor mg = null;
        DeviceBarrier b = null;
        try {
            p = iris.heap().empty(DType.F32, 2L * world * slot);  // two sets: odd and even calls
            s = iris.heap().empty(DType.F32, slot);
            g = iris.heap().empty(DType.F32, world * slot);
            a = iris.heap().zeros(DType.I64, arrivalWords(max));
            ms = iris.heap().empty(DType.F32, entries);
            mg = iris.heap().empty(DType.F32, world * entries);
            b = iris.newBarrier();
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, b, mg, ms, a, g, s, p);
            throw e;
        }
        partials = p;
        send = s;
        gathered = g;
        arrived = a;
        mergedSend = ms;
        mergedGathered = mg;
        barrier = b;
        args = new FlashDecodeArgs(iris.deviceContext().bytes());
    }

    /**
     * u64 words of the fused kernel's counters for calls up to {@code max}: two sets of [B][Hkv]
     * arrival counters, then [B][Hkv][chunks] claims on the chunks (flash_decode.cu), all zeroed
     * together whenever the counters restart.
     */
    static long arrivalWords(FlashDecodeProblem max) {
        long heads = (long) max.batch() * max.kvHeads();
        return 2 * heads + heads * max.chunks();
    }

    /**
     * Bytes of the symmetric workspace of an instance made for {@code max} on {@code world} ranks, as
     * {@link #create} allocates it: two sets of every rank's partials, the send slot and the gathered
     * partials ({@code (3 world + 1) x max.slotFloats()} F32), the conventional path's send and
     * gathered entries ({@code (world + 1) x max.mergedFloats()} F32), and {@link #arrivalWords} u64.
     */
    public static long workspaceBytes(FlashDecodeProblem max, int world) {
        AttentionChecks.notNull("flash decode", "max", max);
        AttentionChecks.positive("flash decode", "world", world);
        return 4 * ((3L * world + 1) * max.slotFloats() + (world + 1L) * max.mergedFloats()) + 8 * arrivalWords(max);
    }

    /**
     * Collective: loads the kernels and allocates the symmetric workspace for calls up to {@code
     * max} (its batch, heads and head size, and at most {@code max.len()} tokens per rank with its
     * chunk length): two sets of the partials of every rank ({@code 2 x world x max.slotFloats()}
     * F32), the arrival counters and the claims on the chunks ({@code arrivalWords}, zeroed, before
     * every rank is told to go on) of the fused kernel, the unfused paths' own send slot and gathered
     * partials (so that they never share a buffer with the fused kernel that a slower peer may still
     * read or write), and the conventional path's send and gathered entries ({@link #workspaceBytes}
     * in all).
     */
    public static FlashDecode create(Iris iris, FlashDecodeProblem max) {
        AttentionChecks.notNull("flash decode", "iris", iris);
        AttentionChecks.notNull("flash decode", "max", max);
        Platform.require(Platform.CUDA, MODULE, REQUIREMENT);
        NodeTeamOperations.requirePeers(iris, "FlashDecode");
        KernelLibrary library = KernelLibrary.forIris(iris);
        FlashDecode decode;
        try {
            decode = new FlashDecode(iris, max, library);
        } catch (RuntimeException | Error e) {
            library.close();
            throw e;
        }
        // No peer may signal this rank's counters before they are zero.
        iris.synchronize();
        iris.hostBarrier();
        return decode;
    }

    /** The largest problem this instance serves. */
    public FlashDecodeProblem max() {
        return max;
    }

    /** Calls of {@link #forward} so far. */
    public synchronized long calls() {
        return calls;
    }

    /** Times the arrival counters had to be zeroed again because the number of chunks changed. */
    public synchronized long counterResets() {
        return resets;
    }

    /** Bytes of this rank's symmetric workspace. */
    public long workspaceBytes() {
        return partials.byteSize() + send.byteSize() + gathered.byteSize() + arrived.byteSize() + mergedSend.byteSize()
                + mergedGathered.byteSize();
    }

    // ---- the fused kernel --------------------------------------------------------------------------

    /** Fused flash-decode on tensors: q [B, Hq, D], k and v [B, Hkv, len, D], o [B, Hq, D]. */
    public void forward(SymTensor q, SymTensor k, SymTensor v, SymTensor o, Stream stream) {
        FlashDecodeProblem p = problemOf(q, k, v, o);
        forward(p, q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(), stream);
    }

    /**
     * Fused flash-decode on device addresses laid out as {@code p} says; {@code p} must fit this
     * instance ({@link #max()}: the same dtype, batch, heads, head size and chunk length, and at most
     * its len). Enqueues the kernel.
     */
    public synchronized void forward(FlashDecodeProblem p, long q, long k, long v, long o, Stream stream) {
        ensureOpen();
        check(p, q, k, v, o, stream);
        if (stream.isCapturing()) {
            // Each call's epoch picks the set of partials and the arrival count it waits for; a
            // replay would repeat one call's epoch and combine stale partials.
            throw AttentionChecks.fail("flash decode", "stream is capturing a CUDA graph, and forward's calls cannot be"
                    + " replayed (each has its own epoch); call forward eagerly");
        }
        if (callsSinceReset > 0 && p.chunks() != chunksSinceReset) {
            // The kernel waits for (calls of this parity since the reset) x world x chunks arrivals
            // in its set: when the number of chunks changes, start the counters again from zero
            // (and the claims on the chunks, which hold epochs, which restart with them).
            // Every rank does the same; the barrier keeps the peers' next signals behind this
            // rank's reset, and every peer's previous call (this rank's previous call has received
            // all its partials).
            Memcpy.memset(arrived.deviceAddress(), 0, arrived.byteSize(), stream);
            barrier.enqueue(stream);
            callsSinceReset = 0;
            resets++;
        }
        chunksSinceReset = p.chunks();
        long epoch = ++callsSinceReset;  // its parity picks the set of partials and counters
        Kernel kernel = kernels.get(p.kernelName());
        kernel.launch(p.launchShape(), stream,
                args.fused(p, q, k, v, o, partials.deviceAddress(), arrived.deviceAddress(), epoch), false);
        calls++;
    }

    // ---- the conventional path ---------------------------------------------------------------------

    /**
     * {@link #conventional(FlashDecodeProblem, long, long, long, long, PartialsGather, Stream)} on
     * tensors, gathering with the copy engine.
     */
    public void conventional(SymTensor q, SymTensor k, SymTensor v, SymTensor o, Stream stream) {
        FlashDecodeProblem p = problemOf(q, k, v, o);
        conventional(p, q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(), null, stream);
    }

    /**
     * The conventional unfused decode, on device addresses laid out as {@code p} says (which must fit
     * this instance, as for {@link #forward}): {@link #partial} into this rank's send slot, {@link
     * #merge} of its chunks into one entry per query head, {@code gather} of every rank's entries
     * ({@code p.mergedFloats()} F32 each; null: {@link #copyEngineGather}), and {@link #combineMerged}
     * into o. Stream-ordered, no host synchronization; capturable in a CUDA graph when the gather is.
     *
     * <pre>{@code
     * FlashDecode.PartialsGather nccl = (send, recv, floats, s) -> comm.allGather(send, recv, floats, DType.F32, s);
     * decode.conventional(p, q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(), nccl, stream);
     * }</pre>
     */
    public synchronized void conventional(FlashDecodeProblem p, long q, long k, long v, long o, PartialsGather gather,
                                          Stream stream) {
        ensureOpen();
        check(p, q, k, v, o, stream);
        // The partials stay on this rank, in the baseline's send slot: a baseline call's gather has
        // finished reading it before this call starts in stream order, as before its own next call.
        partial(p, q, k, v, send.deviceAddress(), stream);
        merge(p, send.deviceAddress(), mergedSend.deviceAddress(), stream);
        long floats = p.mergedFloats();
        if (gather == null) {
            copyEngineGather(mergedSend.deviceAddress(), mergedGathered.deviceAddress(), floats, stream);
        } else {
            gather.allGather(mergedSend.deviceAddress(), mergedGathered.deviceAddress(), floats, stream);
        }
        combineMerged(p, mergedGathered.deviceAddress(), iris.node().size(), o, stream);
    }

    /**
     * This rank's partials at {@code partials} ({@code p.slotFloats()} F32, as {@link #partial} writes
     * them) merged into one entry per query head at {@code out} ({@code p.mergedFloats()} F32, layout
     * [B][Hkv][1][G][D + 4]: the normalized output, then its log-sum-exp in log2 units and a sum of 1).
     */
    public synchronized void merge(FlashDecodeProblem p, long partials, long out, Stream stream) {
        ensureOpen();
        checkMerge(p, partials, out, stream);
        Kernel kernel = kernels.get(p.mergeKernelName());
        kernel.launch(p.combineLaunchShape(), stream, args.merge(p, partials, out), false);
    }

    /** o from {@code world} ranks' gathered merged entries at {@code gathered} ([world][B][Hkv][1][G][D + 4]). */
    public synchronized void combineMerged(FlashDecodeProblem p, long gathered, int world, long o, Stream stream) {
        ensureOpen();
        checkCombine(p, gathered, world, o, stream);
        Kernel kernel = kernels.get(p.combineKernelName());
        kernel.launch(p.combineLaunchShape(), stream, args.combine(p, gathered, world, 1, o), false);
    }

    // ---- the baseline ------------------------------------------------------------------------------

    /** {@link #baseline(FlashDecodeProblem, long, long, long, long, PartialsGather, Stream)} on tensors, gathering with the copy engine. */
    public void baseline(SymTensor q, SymTensor k, SymTensor v, SymTensor o, Stream stream) {
        FlashDecodeProblem p = problemOf(q, k, v, o);
        baseline(p, q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(), null, stream);
    }

    /**
     * The all-partials path: {@link #partial} into this rank's send slot, {@code gather} of every
     * rank's slot into the gathered buffer (null: {@link #copyEngineGather}), {@link #combine}. Its
     * output equals the fused kernel's bit for bit; {@link #conventional} gathers chunks times fewer
     * bytes and is the faster unfused path.
     */
    public synchronized void baseline(FlashDecodeProblem p, long q, long k, long v, long o, PartialsGather gather, Stream stream) {
        ensureOpen();
        check(p, q, k, v, o, stream);
        partial(p, q, k, v, send.deviceAddress(), stream);
        long floats = p.slotFloats();
        if (gather == null) {
            copyEngineGather(send.deviceAddress(), gathered.deviceAddress(), floats, stream);
        } else {
            gather.allGather(send.deviceAddress(), gathered.deviceAddress(), floats, stream);
        }
        combine(p, gathered.deviceAddress(), iris.node().size(), o, stream);
    }

    /**
     * The default all-gather of {@link #conventional} and {@link #baseline}: a device barrier (every
     * rank's slot is written), copy-engine reads of each rank's slot, and a barrier (nobody overwrites
     * a slot that a peer still reads).
     */
    public void copyEngineGather(long sendAddress, long recv, long floats, Stream stream) {
        long bytes = floats * 4;
        barrier.enqueue(stream);
        for (int r = 0; r < iris.node().size(); r++) {
            // Peers' slots are mapped into this rank's address space: a device-to-device copy reads
            // them over NVLink with the copy engine and, unlike a peer copy, can be captured in a graph.
            Memcpy.deviceToDevice(recv + r * bytes, iris.deviceContext().translate(sendAddress, r), bytes, stream);
        }
        barrier.enqueue(stream);
    }

    /** This rank's partials ({@code p.slotFloats()} F32 at {@code out}, layout [B][Hkv][chunks][G][D + 4]). */
    public synchronized void partial(FlashDecodeProblem p, long q, long k, long v, long out, Stream stream) {
        ensureOpen();
        AttentionChecks.address("flash decode", "partials", out, 4);
        Kernel kernel = kernels.get(p.partialKernelName());
        kernel.launch(p.launchShape(), stream, args.partial(p, q, k, v, out), false);
    }

    /** o from {@code world} ranks' gathered partials at {@code gathered} ([world][B][Hkv][chunks][G][D + 4]). */
    public synchronized void combine(FlashDecodeProblem p, long gathered, int world, long o, Stream stream) {
        ensureOpen();
        checkCombine(p, gathered, world, o, stream);
        Kernel kernel = kernels.get(p.combineKernelName());
        kernel.launch(p.combineLaunchShape(), stream, args.combine(p, gathered, world, p.chunks(), o), false);
    }

    /** This rank's symmetric partials buffer (world slots of {@link #max()}'s size). */
    public SymTensor partialsBuffer() {
        return partials;
    }

    /** This rank's send slot of the baseline. */
    public SymTensor sendBuffer() {
        return send;
    }

    /** The baseline's gathered partials (world slots of {@link #max()}'s size). */
    public SymTensor gatheredBuffer() {
        return gathered;
    }

    /** This rank's merged entries, the conventional path's send slot ({@link #max()}'s {@code mergedFloats()} F32). */
    public SymTensor mergedSendBuffer() {
        return mergedSend;
    }

    /** The conventional path's gathered entries (world slots of {@link #max()}'s {@code mergedFloats()} F32). */
    public SymTensor mergedGatheredBuffer() {
        return mergedGathered;
    }

    // ---- checks ------------------------------------------------------------------------------------

    private FlashDecodeProblem problemOf(SymTensor q, SymTensor k, SymTensor v, SymTensor o) {
        String op = "flash decode";
        AttentionChecks.notNull(op, "k", k);
        AttentionChecks.live(op, Attention.operand("k", k));
        long[] ks = k.shape();
        if (ks.length != 4) {
            throw AttentionChecks.fail(op, "k " + k + " has rank " + ks.length + "; expected [batch, kvHeads, len, headDim]");
        }
        AttentionChecks.fitsInt(op, "k's len", ks[2]);
        FlashDecodeProblem p = max.withLen((int) ks[2]);
        checkTensors(p, Attention.operand("q", q), Attention.operand("k", k), Attention.operand("v", v), Attention.operand("o", o));
        return p;
    }

    /** q [B, Hq, D], k and v [B, Hkv, len, D], o [B, Hq, D], all of the problem's dtype. */
    static void checkTensors(FlashDecodeProblem p, AttentionChecks.Operand q, AttentionChecks.Operand k, AttentionChecks.Operand v,
                             AttentionChecks.Operand o) {
        String op = "flash decode";
        AttentionChecks.notNull(op, "q", q);
        AttentionChecks.notNull(op, "k", k);
        AttentionChecks.notNull(op, "v", v);
        AttentionChecks.notNull(op, "o", o);
        AttentionChecks.shape(op, q, p.dtype(), p.batch(), p.qHeads(), p.headDim());
        AttentionChecks.shape(op, k, p.dtype(), p.batch(), p.kvHeads(), p.len(), p.headDim());
        AttentionChecks.shape(op, v, p.dtype(), p.batch(), p.kvHeads(), p.len(), p.headDim());
        AttentionChecks.shape(op, o, p.dtype(), p.batch(), p.qHeads(), p.headDim());
    }

    /** A call's problem must fit the workspace; addresses aligned; o apart from the inputs. */
    void check(FlashDecodeProblem p, long q, long k, long v, long o, Stream stream) {
        checkFits(max, p);
        String op = "flash decode";
        AttentionChecks.notNull(op, "stream", stream);
        AttentionChecks.address(op, "q", q, 2);
        AttentionChecks.address(op, "k", k, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "v", v, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "o", o, 2);
        AttentionChecks.disjoint(op, "o", o, p.qBytes(), "q", q, p.qBytes());
        AttentionChecks.disjoint(op, "o", o, p.qBytes(), "k", k, p.kvBytes());
        AttentionChecks.disjoint(op, "o", o, p.qBytes(), "v", v, p.kvBytes());
    }

    /**
     * The merge's arguments: {@code partials} and {@code out} 16-byte aligned (the kernel moves
     * float4s) and apart from each other.
     */
    static void checkMerge(FlashDecodeProblem p, long partials, long out, Stream stream) {
        String op = "flash decode";
        AttentionChecks.notNull(op, "problem", p);
        AttentionChecks.address(op, "partials", partials, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "merged entries", out, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.disjoint(op, "merged entries", out, 4 * p.mergedFloats(), "partials", partials, 4 * p.slotFloats());
        AttentionChecks.notNull(op, "stream", stream);
    }

    /** The combine's arguments: the gathered slots 16-byte aligned (the kernel reads float4s), o aligned, world >= 1. */
    static void checkCombine(FlashDecodeProblem p, long gathered, int world, long o, Stream stream) {
        String op = "flash decode";
        AttentionChecks.notNull(op, "problem", p);
        AttentionChecks.address(op, "gathered partials", gathered, AttentionChecks.POINTER_ALIGNMENT);
        AttentionChecks.address(op, "O", o, 2);
        AttentionChecks.positive(op, "world", world);
        AttentionChecks.notNull(op, "stream", stream);
    }

    /** {@code p} may use a workspace made for {@code max}: the same shapes but len, and len at most max's. */
    static void checkFits(FlashDecodeProblem max, FlashDecodeProblem p) {
        String op = "flash decode";
        AttentionChecks.notNull(op, "problem", p);
        if (p.dtype() != max.dtype() || p.batch() != max.batch() || p.qHeads() != max.qHeads() || p.kvHeads() != max.kvHeads()
                || p.headDim() != max.headDim() || p.chunkLen() != max.chunkLen()) {
            throw AttentionChecks.fail(op, p + " does not fit this instance, made for " + max
                    + " (dtype, batch, heads, headDim and chunkLen must match)");
        }
        if (p.len() > max.len()) {
            throw AttentionChecks.fail(op, "len = " + p.len() + " exceeds this instance's " + max.len()
                    + " tokens per rank (the partials buffer is sized for it)");
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(AttentionChecks.who("flash decode") + ": FlashDecode used after close()");
        }
    }

    /**
     * Frees the workspace (collective, like every heap free) and unloads the kernels; synchronize
     * first. Safe to call twice.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(barrier, mergedGathered::closeIfLive, mergedSend::closeIfLive, arrived::closeIfLive,
                gathered::closeIfLive, send::closeIfLive, partials::closeIfLive, library, this::releaseArguments);
    }

    private synchronized void releaseArguments() {
        args.close();
    }

    @Override
    public String toString() {
        return "FlashDecode(node rank " + iris.node().index() + " of " + iris.node().size() + ", up to " + max + (closed.get() ? ", closed" : "") + ")";
    }
}

package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.runtime.abi.iris_moe_stats;
import java.util.List;
import java.util.Map;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;

/**
 * MoE dispatch on the symmetric heap, among the ranks of a node ({@link Iris#node()}; ranks below
 * are node ranks): each rank writes its tokens straight into the receive buffers of the ranks that
 * own their experts, grouped by local expert, and every owner learns how many rows each expert got
 * and where each row came from, with no host round trip ({@code moe_dispatch.cu}). {@link
 * MoeCombine} is the inverse. For decode, a few tokens per rank, {@link MoeLowLatency} skips the
 * count exchange at the cost of memory.
 *
 * <pre>{@code
 * int world = iris.node().size();
 * MoeConfig config = MoeConfig.of(4096, 64, 2, 4096, MoeConfig.capacityFor(1.25, 4096, 2, 64, world));
 * try (MoeDispatch dispatch = MoeDispatch.create(iris, config);         // collective: allocates once
 *      MoeCombine combine = MoeCombine.create(dispatch)) {
 *     SymTensor x = heap.randn(DType.BF16, 4096, 4096);                  // [tokens, hidden]
 *     SymTensor ids = ...;                                               // I32 [tokens, topK] from the router
 *     SymTensor w = ...;                                                 // F32 [tokens, topK]
 *     SymTensor y = heap.empty(DType.BF16, 4096, 4096);
 *     Stream s = iris.stream();
 *     dispatch.dispatch(x, ids, w, s);
 *     // the experts: rows [0, counts[l]) of received()[l] are local expert l's input
 *     expertMlp(dispatch.received(), dispatch.counts(), out, s);          // out: [localExperts, capacity, hidden]
 *     combine.combine(out, y, s);                                        // y[t] = sum_k w[t,k] * out of route (t, k)
 *     iris.synchronize(s);                                               // raises device errors, if any
 * }
 * }</pre>
 *
 * <h2>Layout</h2>
 * With E experts on W ranks, rank r owns experts [r L, (r+1) L), L = E / W; expert e is local
 * expert e % L of rank e / L. A route is one (token t, slot k) of a rank, numbered t * topK + k.
 * <ul>
 * <li>{@link #received()}: BF16 [L, capacity, hidden]. Expert e's rows are ordered by source rank,
 *     then by route number within a source: route i of rank s lands in row
 *     {@code sum_{s' < s} n[s'][e] + #(routes j < i of rank s to e)}, where n[s][e] is rank s's
 *     routes to e. The same layout on every run, whatever the timing.</li>
 * <li>{@link #counts()}: I32 [L], rows local expert l got: {@code min(routed, capacity)}; rows
 *     past it are left as they were (stale). The expert computation reads it on the device.</li>
 * <li>{@link #sources()}: I32 [L, capacity, 2]: row j of local expert l came from rank
 *     {@code sources[l][j][0]}'s route {@code sources[l][j][1]} (token = route / topK, k = route % topK).</li>
 * <li>A route whose row would land at or past the capacity is not delivered ({@link
 *     OverflowPolicy}: FAIL makes the next {@link Iris#synchronize} throw, naming the expert and
 *     the counts; DROP counts it), and combine gives it no contribution. An expert id outside
 *     [0, E) is never delivered either and is always an error (device error 17, naming the route
 *     and the id). {@link #stats(Stream)} counts both.</li>
 * </ul>
 *
 * <h2>Protocol</h2>
 * Three kernels: two on one grid of up to 256 blocks, one per 512 routes, then one that copies the
 * rows:
 * <ol>
 * <li>moe_dispatch_count: block 0 clears this rank's tile counts (below) and tells every peer that
 *     this rank has arrived at the call. Each block counts its routes per expert; the last block to
 *     finish turns the per-block counts into per-block bases, waits for every peer's arrival (wait
 *     site {@link MoeSites#ARRIVE}) and writes this rank's routes per expert (E int32) into row r of
 *     every rank's count matrix, then signals them. Every rank thus holds all W x E counts and
 *     computes the same prefix sums: nothing else is exchanged before the rows.</li>
 * <li>moe_dispatch_place: each block waits for every peer's counts (site {@link MoeSites#COUNTS})
 *     and ranks its routes a tile of 512 at a time (stable: by route number): each route's row in
 *     its expert, and this rank's routes grouped by expert. The last block writes counts / routed
 *     and the stats.</li>
 * <li>moe_dispatch_copy: the rows, 128 rows of one expert (a receive-buffer tile) at a time, in the
 *     order the expert GEMM takes them (local expert, then tile, then owner): each token row into
 *     the owner's receive buffer and {rank, route} into its sources (remote stores), then the
 *     number of rows into the owner's count of that tile. The last block signals "rows sent" to
 *     every peer and waits for every peer's (site {@link MoeSites#ROWS}), then records the errors
 *     (only then: a recorded error cuts the waits short). An expert GEMM fed by
 *     the dispatch ({@link MoeExpertGemm#dispatchAndGemm}) starts beside this kernel and waits for
 *     each tile's count instead (site {@link MoeSites#TILE_ROWS}).</li>
 * </ol>
 * Every wait is bounded by the Iris device timeout; a timeout names its site ({@link
 * MoeSites#describe}). A rank writes into a peer's buffers only after it has seen the peer arrive
 * at the same call, so the peer's previous combine and expert computation, which read them, are
 * over. The kernels keep a call counter (epoch) in the workspace: flags only grow, nothing is reset
 * between calls, and a CUDA graph of dispatch + experts + combine replays correctly.
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@link #create} and {@link #close()} are collective; every rank passes the same config.</li>
 * <li>Every rank calls {@link #dispatch} the same number of times in the same order, each with its
 *     own number of tokens (0 to maxTokens, different per rank), and either {@link
 *     MoeCombine#combine} once after it or not at all; dispatch, the expert computation on {@link
 *     #received()}, and combine run on one stream (or streams ordered by events).</li>
 * <li>Tokens, ids and weights are this rank's own ([rows, hidden] BF16, [rows, topK] I32, [rows,
 *     topK] F32 with rows at least the call's tokens): they are only read locally. The weights are
 *     copied by the dispatch for the combine.</li>
 * <li>Calls only enqueue work (no host synchronization, no allocation). The blocks of a grid never
 *     wait for each other, so the grids need not be co-resident.</li>
 * <li>Arguments are checked before anything is launched; a failed check throws {@link
 *     IllegalArgumentException} naming the rank, the call, the argument and what was expected, and
 *     leaves the instance usable.</li>
 * </ul>
 */
public final class MoeDispatch extends AbstractMoeDispatch {
    /** The kernel modules ({@code moe_dispatch.cu}, {@code moe_combine.cu}). */
    static final String DISPATCH_MODULE = "moe_dispatch";
    static final String COMBINE_MODULE = "moe_combine";
    static final String COUNT_KERNEL = "moe_dispatch_count";
    static final String PLACE_KERNEL = "moe_dispatch_place";
    static final String COPY_KERNEL = "moe_dispatch_copy";
    static final String COMBINE_SEND_KERNEL = "moe_combine_send";
    static final String COMBINE_REDUCE_KERNEL = "moe_combine_reduce";
    /** The fused expert GEMM's end of combine ({@link MoeExpertGemm#gemmAndCombine}). */
    static final String COMBINE_PUBLISH_KERNEL = "moe_combine_publish";

    private final MoeLayout layout;
    private final SymTensor sources;
    private final SymTensor routed;
    private final MoeArgs.Buffers buffers;
    private final MoeArgs args;
    private final Kernel countKernel;
    private final Kernel placeKernel;
    private final Kernel copyKernel;
    /** The copying kernel's grid limit where an expert GEMM runs beside it (alone it takes the row kernels' limit). */
    private final int feedingCopyLimit;

    private MoeDispatch(Iris iris, MoeConfig config, MoeLayout layout, KernelLibrary library, SymTensor workspace, SymTensor recv,
                        SymTensor sources, SymTensor counts, SymTensor routed, SymTensor staging) {
        super(iris, config, library, workspace, recv, counts, staging);
        this.layout = layout;
        this.sources = sources;
        this.routed = routed;
        this.buffers = new MoeArgs.Buffers(workspace.deviceAddress(), recv.deviceAddress(), sources.deviceAddress(),
                counts.deviceAddress(), routed.deviceAddress(), staging.deviceAddress());
        this.args = new MoeArgs(iris.deviceContext().bytes(), config, layout, buffers);
        KernelModule m = library.module(DISPATCH_MODULE);
        this.countKernel = m.kernel(COUNT_KERNEL);
        this.placeKernel = m.kernel(PLACE_KERNEL);
        this.copyKernel = m.kernel(COPY_KERNEL);
        this.feedingCopyLimit = MoeLayout.feedingCopyLimit(iris.deviceProperties().multiprocessorCount());
    }

    /** Every kernel the MoE classes look up, by module: what the fatbins must hold. */
    static Map<String, List<String>> kernelNames() {
        return Map.of(DISPATCH_MODULE, List.of(COUNT_KERNEL, PLACE_KERNEL, COPY_KERNEL), COMBINE_MODULE,
                List.of(COMBINE_SEND_KERNEL, COMBINE_REDUCE_KERNEL, COMBINE_PUBLISH_KERNEL));
    }

    /**
     * Collective: checks the config against the node (experts divisible by its ranks) and that every
     * rank passed the same one, loads the kernels, allocates the workspace, the receive buffer, the
     * sources, the counts and combine's staging on the symmetric heap (see {@link #heapBytes}), and
     * meets the other ranks once all are zeroed (no peer signals into a workspace before that).
     */
    public static MoeDispatch create(Iris iris, MoeConfig config) {
        MoeCreateChecks.check(iris, "MoeDispatch", config, MoeChecks::layer);  // before any allocation
        int world = iris.node().size();
        int localExperts = config.experts() / world;
        MoeLayout layout = MoeLayout.of(config);
        KernelLibrary library = KernelLibrary.forIris(iris);  // checked variants in checked mode
        SymTensor workspace = null, recv = null, sources = null, counts = null, routed = null, staging = null;
        try {
            for (String module : kernelNames().keySet()) {
                library.module(module);  // a missing module fails here, before anything is allocated
            }
            workspace = iris.heap().zeros(DType.U8, layout.bytes());
            recv = iris.heap().zeros(DType.BF16, localExperts, config.capacity(), config.hidden());
            sources = iris.heap().zeros(DType.I32, localExperts, config.capacity(), 2);
            counts = iris.heap().zeros(DType.I32, localExperts);
            routed = iris.heap().zeros(DType.I32, localExperts);
            staging = iris.heap().empty(DType.BF16, config.maxRoutes(), config.hidden());
            iris.hostBarrier();  // every rank's workspace is zeroed before a peer signals into it
            return new MoeDispatch(iris, config, layout, library, workspace, recv, sources, counts, routed, staging);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, staging, routed, counts, sources, recv, workspace, library);
            throw e;
        }
    }

    // ---- dispatch --------------------------------------------------------------------------------

    /**
     * Sends this rank's first {@code numTokens} tokens to their experts (see the class comment for
     * the layout). {@code tokens}: BF16 [rows, hidden]; {@code expertIds}: I32 [rows, topK], each in
     * [0, experts); {@code weights}: F32 [rows, topK]; rows >= numTokens, numTokens in [0, maxTokens]
     * (0: this rank only receives). Once it has run on {@code stream}, {@link #received()}, {@link
     * #counts()} and {@link #sources()} hold this call's rows from every rank.
     */
    @Override
    public synchronized void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream) {
        final String call = "dispatch";
        ensureOpen(call);
        MoeChecks.dispatchInputs(rank, call, config, numTokens, tokens, expertIds, weights, iris.heap(), stream);
        enqueue(tokens, expertIds, weights, numTokens, rowBlockLimit, stream);
    }

    /**
     * The dispatch of an expert GEMM that it feeds ({@link MoeExpertGemm#dispatchAndGemm}): the
     * same kernels, the copying one on a sixth of the SMs, so that the GEMM launched next on
     * {@code stream} runs beside it. The caller has checked the inputs ({@code
     * MoeChecks.dispatchInputs}) and holds this locked.
     */
    void dispatchFeeding(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream) {
        enqueue(tokens, expertIds, weights, numTokens, feedingCopyLimit, stream);
    }

    /** The three kernels of a checked dispatch, the copying one on at most {@code copyLimit} blocks. */
    private void enqueue(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, int copyLimit, Stream stream) {
        LaunchShape grid = LaunchShape.of(MoeLayout.dispatchBlocks((long) numTokens * config.topK()), MoeLayout.THREADS);
        var a = args.dispatch(tokens.deviceAddress(), expertIds.deviceAddress(), weights.deviceAddress(), numTokens);
        countKernel.launch(grid, stream, a, false);
        placeKernel.launch(grid, stream, a, false);
        copyKernel.launch(LaunchShape.of(MoeLayout.copyBlocks(config, world, copyLimit), MoeLayout.THREADS), stream, a, false);
        dispatched(numTokens);
    }

    // ---- facts -----------------------------------------------------------------------------------

    /** Rows routed to each local expert by all ranks in the last dispatch, before the capacity: I32 [localExperts]. */
    public SymTensor routed() {
        return routed;
    }

    /** Where each received row came from: I32 [localExperts, capacity, 2] of {source rank, route = token * topK + k}. */
    public SymTensor sources() {
        return sources;
    }

    /** Bytes of the symmetric heap this instance holds on every rank. */
    @Override
    public long heapBytes() {
        return heapBytes(config, world);
    }

    /** Bytes of the symmetric heap an instance with that config takes on each of {@code world} ranks (each part 256-byte aligned). */
    public static long heapBytes(MoeConfig c, int world) {
        long l = c.experts() / world;
        long recv = l * c.capacity() * c.hidden() * c.dtype().byteSize();
        long sources = l * c.capacity() * 8;
        long staging = c.maxRoutes() * c.hidden() * c.dtype().byteSize();
        return MoeLayout.of(c).bytes() + MoeLayout.alignUp(recv, 256) + MoeLayout.alignUp(sources, 256) + 2 * MoeLayout.alignUp(4 * l, 256)
                + MoeLayout.alignUp(staging, 256);
    }

    /**
     * What the last dispatch did on this rank: copies the stats and the per-expert counts to the host
     * and waits for {@code stream} (a host round trip, for checks and logs, not the data path). It
     * does not raise device errors ({@link Iris#synchronize} does).
     */
    public MoeStats stats(Stream stream) {
        ensureOpen("stats");
        TensorChecks.notNull(rank, "stats", "stream", stream);
        int statsBytes = AbiLayout.size(iris_moe_stats.class);
        int localExperts = localExperts();
        try (IntPointer header = new IntPointer(statsBytes / 4); IntPointer r = new IntPointer(localExperts);
             IntPointer c = new IntPointer(localExperts)) {
            Memcpy.deviceToHost(header, workspace.deviceAddress() + MoeLayout.STATS, statsBytes, stream);
            Memcpy.deviceToHost(r, routed.deviceAddress(), 4L * localExperts, stream);
            Memcpy.deviceToHost(c, counts.deviceAddress(), 4L * localExperts, stream);
            stream.synchronize();
            int[] routedHost = new int[localExperts];
            int[] countsHost = new int[localExperts];
            r.get(routedHost);
            c.get(countsHost);
            return new MoeStats(header.get(field("dropped_here")), header.get(field("dropped_all")), header.get(field("bad_here")),
                    header.get(field("full_experts")), routedHost, countsHost);
        }
    }

    private static int field(String member) {
        return AbiLayout.offset(iris_moe_stats.class, member) / 4;
    }

    /**
     * Sets the call counter the kernels keep in the workspace (IRIS_MOE_WS_EPOCH, 8 bytes at its
     * start); the next dispatch runs with {@code epoch + 1}. For tests that must reach epochs no
     * test could count up to. Every rank sets the same value with no call in flight.
     */
    void setEpochForTest(long epoch, Stream stream) {
        try (LongPointer value = new LongPointer(1)) {
            value.put(epoch);
            Memcpy.hostToDevice(workspace.deviceAddress() + MoeLayout.EPOCH, value, 8, stream);
            stream.synchronize();
        }
    }

    // ---- what MoeCombine shares ------------------------------------------------------------------

    MoeLayout layout() {
        return layout;
    }

    MoeArgs.Buffers buffers() {
        return buffers;
    }

    /** The arguments, the routed counts and the sources, closed before the shared buffers; a {@link MoeCombine} of this instance is unusable afterwards. */
    @Override
    List<AutoCloseable> ownResources() {
        return List.of(args, routed, sources);
    }
}

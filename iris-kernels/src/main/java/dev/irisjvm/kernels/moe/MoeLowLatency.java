package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;
import java.util.List;
import java.util.Map;

/**
 * MoE dispatch and combine for decode, a few tokens per rank (1 to a few hundred): no count
 * exchange before the rows, so a dispatch is one kernel and one cross-rank hop ({@code
 * moe_ll.cu}). {@link MoeDispatch} / {@link MoeCombine} pack rows densely and suit many tokens;
 * this mode trades memory for latency: its receive buffer grows with world x maxTokens x topK x
 * hidden per local expert.
 *
 * <pre>{@code
 * int world = iris.node().size();
 * MoeConfig config = MoeConfig.of(7168, 256, 8, 128, 1);       // capacity and policy are not used here
 * try (MoeLowLatency ll = MoeLowLatency.create(iris, config)) {  // collective: allocates once
 *     Stream s = iris.stream();
 *     ll.dispatch(x, ids, w, s);                                  // x: BF16 [tokens, 7168]; ids I32 / w F32 [tokens, 8]
 *     // rows [0, counts[l][src]) of received()[l][src] are local expert l's input from rank src
 *     expertMlp(ll.received(), ll.counts(), out, s);              // out: the receive buffer's shape
 *     ll.combine(out, y, s);                                      // y[t] = sum_k w[t,k] * out of route (t, k)
 *     iris.synchronize(s);                                        // raises device errors, if any
 * }
 * }</pre>
 *
 * <h2>Layout</h2>
 * With E experts on W ranks, L = E / W local experts, and R = maxTokens x topK rows per region:
 * <ul>
 * <li>{@link #received()}: BF16 [L, W, R, hidden]. Region (l, src) holds rank src's routes to its
 *     local expert l in route order (route = token x topK + k): the j-th of them is row j. A region
 *     holds every route of its source, so nothing is ever dropped and there is no capacity.</li>
 * <li>{@link #counts()}: I32 [L, W], the rows of each region valid in the last dispatch; rows past
 *     it are stale. The expert computation reads it on the device.</li>
 * <li>{@link #receivedRoutes()}: I32 [L, W, R]: the route at its source of each received row.</li>
 * <li>An expert id outside [0, E) is not delivered, contributes nothing to combine, and is an
 *     error (device error 17, {@link MoeSites#BAD_EXPERT}).</li>
 * </ul>
 *
 * <h2>Protocol</h2>
 * moe_ll_dispatch, one block per 512 routes: each block writes its routes' token rows into their
 * regions on the owners (remote stores). The last block to finish writes, per expert, the number
 * of rows it sent and then the call's epoch (a release signal) into the owner's workspace, waits
 * for every (local expert, source) signal of this call ({@link MoeSites#LL_ROWS}) and copies the
 * counts. Combine: moe_ll_combine_send returns each valid row's output into its source's staging
 * row of the route and signals the source; moe_ll_combine_reduce waits for every owner ({@link
 * MoeSites#LL_RESULTS}) and sums each token's topK rows in f32 in k order (the same bits on every
 * run), writing BF16. The waits are bounded by the Iris device timeout; no block waits for another
 * block of its grid. The epoch lives in device memory and only grows, so a CUDA graph of dispatch
 * + experts + combine replays correctly.
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@link #create} and {@link #close()} are collective; every rank passes the same config. Its
 *     capacity and policy are not used.</li>
 * <li>Every rank calls {@link #dispatch} and then {@link #combine}, alternately, the same number of
 *     times (a dispatch before the last one's combine is refused): the next dispatch writes into
 *     owners' receive buffers without a handshake, which is safe because every owner's combine of
 *     the previous call has finished reading them by then. All on one stream (or streams ordered
 *     by events).</li>
 * <li>{@link #received()} holds a call's rows from its dispatch until this rank's combine; peers
 *     write the next call's rows into it as soon as they dispatch, without asking, so nothing else
 *     may write it.</li>
 * <li>numTokens differs per rank, 0 to maxTokens (0: this rank only receives and returns).</li>
 * <li>Calls only enqueue work, and arguments are checked before anything is launched; a failed
 *     check throws {@link IllegalArgumentException} naming the rank, the call and the argument,
 *     and leaves the instance usable.</li>
 * </ul>
 */
public final class MoeLowLatency extends AbstractMoeDispatch {
    static final String MODULE = "moe_ll";
    static final String DISPATCH_KERNEL = "moe_ll_dispatch";
    static final String COMBINE_SEND_KERNEL = "moe_ll_combine_send";
    static final String COMBINE_REDUCE_KERNEL = "moe_ll_combine_reduce";

    private final MoeLowLatencyLayout layout;
    private final SymTensor recvRoutes;
    private final MoeLowLatencyArgs args;
    private final Kernel dispatchKernel;
    private final Kernel sendKernel;
    private final Kernel reduceKernel;

    private MoeLowLatency(Iris iris, MoeConfig config, MoeLowLatencyLayout layout, KernelLibrary library, SymTensor workspace,
                          SymTensor recv, SymTensor recvRoutes, SymTensor counts, SymTensor staging) {
        super(iris, config, library, workspace, recv, counts, staging);
        this.layout = layout;
        this.recvRoutes = recvRoutes;
        this.args = new MoeLowLatencyArgs(iris.deviceContext().bytes(), config, layout, new MoeLowLatencyArgs.Buffers(
                workspace.deviceAddress(), recv.deviceAddress(), recvRoutes.deviceAddress(), counts.deviceAddress(),
                staging.deviceAddress()));
        KernelModule m = library.module(MODULE);
        this.dispatchKernel = m.kernel(DISPATCH_KERNEL);
        this.sendKernel = m.kernel(COMBINE_SEND_KERNEL);
        this.reduceKernel = m.kernel(COMBINE_REDUCE_KERNEL);
    }

    /** Every kernel this class looks up, by module: what the fatbins must hold. */
    static Map<String, List<String>> kernelNames() {
        return Map.of(MODULE, List.of(DISPATCH_KERNEL, COMBINE_SEND_KERNEL, COMBINE_REDUCE_KERNEL));
    }

    /**
     * Collective: checks the config against the node and that every rank passed the same one, loads
     * the kernels, allocates the workspace, the receive buffer and its routes, the counts and
     * combine's staging on the symmetric heap ({@link #heapBytes}), and meets the other ranks once
     * all are zeroed (no peer signals into a workspace before that).
     */
    public static MoeLowLatency create(Iris iris, MoeConfig config) {
        MoeCreateChecks.check(iris, "MoeLowLatency", config, MoeChecks::lowLatencyLayer);  // before any allocation
        int world = iris.node().size();
        MoeLowLatencyLayout layout = MoeLowLatencyLayout.of(config, world);
        int l = layout.localExperts();
        int rows = layout.regionRows();
        KernelLibrary library = KernelLibrary.forIris(iris);  // checked variants in checked mode
        SymTensor workspace = null, recv = null, recvRoutes = null, counts = null, staging = null;
        try {
            library.module(MODULE);  // a missing module fails here, before anything is allocated
            workspace = iris.heap().zeros(DType.U8, layout.bytes());
            recv = iris.heap().zeros(DType.BF16, l, world, rows, config.hidden());
            recvRoutes = iris.heap().zeros(DType.I32, l, world, rows);
            counts = iris.heap().zeros(DType.I32, l, world);
            staging = iris.heap().empty(DType.BF16, rows, config.hidden());
            iris.hostBarrier();  // every rank's workspace is zeroed before a peer signals into it
            return new MoeLowLatency(iris, config, layout, library, workspace, recv, recvRoutes, counts, staging);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, staging, counts, recvRoutes, recv, workspace, library);
            throw e;
        }
    }

    /**
     * Sends this rank's first {@code numTokens} tokens to their experts (see the class comment for
     * the layout). {@code tokens}: BF16 [rows, hidden]; {@code expertIds}: I32 [rows, topK], each in
     * [0, experts); {@code weights}: F32 [rows, topK]; rows >= numTokens, numTokens in [0,
     * maxTokens]. Once it has run on {@code stream}, {@link #received()} and {@link #counts()} hold
     * this call's rows from every rank.
     */
    @Override
    public synchronized void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream) {
        final String call = "dispatch";
        ensureOpen(call);
        if (dispatchPending()) {
            throw new IllegalStateException("rank " + rank + ": " + call + ": the last dispatch has no combine yet: every dispatch of"
                    + " the low-latency mode is followed by its combine (the next rows overwrite regions an owner may still read)");
        }
        MoeChecks.dispatchInputs(rank, call, config, numTokens, tokens, expertIds, weights, iris.heap(), stream);
        var a = args.dispatch(tokens.deviceAddress(), expertIds.deviceAddress(), weights.deviceAddress(), numTokens);
        dispatchKernel.launch(LaunchShape.of(MoeLowLatencyLayout.dispatchBlocks((long) numTokens * config.topK()), MoeLayout.THREADS),
                stream, a, false);
        dispatched(numTokens);
    }

    /**
     * Returns {@code expertOutputs}' rows to their sources and writes each of the last dispatch's
     * tokens' weighted sum into {@code out}: {@code out[t] = bf16( sum over k = 0 .. topK-1, in that
     * order, of w[t][k] * expertOutputs[row of route (t, k)] )}, in f32 with fused multiply-adds,
     * rounded once. {@code expertOutputs}: BF16, the receive buffer's shape [L, W, R, hidden] (or
     * [L W R, hidden]); rows at or past the counts are not read; it may be {@link #received()}.
     * {@code out}: BF16 [rows, hidden], rows at least the dispatch's tokens; it may be the tokens.
     */
    public synchronized void combine(SymTensor expertOutputs, SymTensor out, Stream stream) {
        final String call = "combine";
        int pendingTokens = pendingTokens(call);
        Operand e = MoeChecks.operand(rank, call, "expertOutputs", expertOutputs, iris.heap());
        Operand o = MoeChecks.operand(rank, call, "out", out, iris.heap());
        TensorChecks.notNull(rank, call, "stream", stream);
        MoeChecks.lowLatencyOutputs(rank, call, e, config.dtype(), layout.localExperts(), world, layout.regionRows(), config.hidden());
        MoeChecks.matrix(rank, call, o, config.dtype(), config.hidden(), pendingTokens, "hidden");
        var a = args.combine(expertOutputs.deviceAddress(), out.deviceAddress(), pendingTokens);
        sendKernel.launch(LaunchShape.of(MoeLayout.rowBlocks(layout.receiveRows(), rowBlockLimit), MoeLayout.THREADS), stream, a, false);
        reduceKernel.launch(LaunchShape.of(MoeLayout.rowBlocks(pendingTokens, rowBlockLimit), MoeLayout.THREADS), stream, a, false);
        combined();
    }

    /** Rows of one (local expert, source) region: maxTokens x topK. */
    public int regionRows() {
        return layout.regionRows();
    }

    /** The route at its source (token x topK + k) of each received row: I32 [localExperts, world, regionRows]. */
    public SymTensor receivedRoutes() {
        return recvRoutes;
    }

    /** Bytes of the symmetric heap this instance holds on every rank. */
    @Override
    public long heapBytes() {
        return layout.heapBytes(config.hidden(), config.dtype().byteSize());
    }

    /** Bytes of the symmetric heap an instance with that config takes on each of {@code world} ranks. */
    public static long heapBytes(MoeConfig c, int world) {
        return MoeLowLatencyLayout.of(c, world).heapBytes(c.hidden(), c.dtype().byteSize());
    }

    /** The arguments and the routes of the received rows, closed before the buffers. */
    @Override
    List<AutoCloseable> ownResources() {
        return List.of(args, recvRoutes);
    }
}

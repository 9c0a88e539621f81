package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.MainloopMaps;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.TensorMapCache;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The experts' GEMM of a MoE layer on an {@link MoeDispatch}'s receive buffer, every local expert in
 * one launch ({@code moe_expert_gemm.cu}), and the same GEMM with combine as its epilogue: each
 * output row goes straight from the tensor cores to its token's home rank, and only the weighted
 * sum is left to do. Fed by the dispatch ({@link #dispatchAndGemm}, {@link #forward}), the GEMM
 * runs beside the dispatch's copy and starts each tile of 128 rows as soon as they have arrived.
 *
 * <pre>{@code
 * MoeConfig config = MoeConfig.of(4096, 64, 2, 4096, 1024);              // capacity: a multiple of 128
 * try (MoeDispatch dispatch = MoeDispatch.create(iris, config);
 *      MoeExpertGemm experts = MoeExpertGemm.create(dispatch, 4096)) {   // n = 4096 columns per expert
 *     int l = dispatch.localExperts();
 *     SymTensor w = heap.randn(DType.BF16, l, 4096, 4096);               // [l, n, hidden]: expert e's Linear weight
 *     SymTensor h = heap.empty(DType.BF16, l, config.capacity(), 4096);  // [l, capacity, n]
 *     Stream s = iris.stream();
 *     dispatch.dispatch(x, ids, weights, s);
 *     experts.gemm(w, h, s);             // h[e][j] = received[e][j] W_e^T for j < counts[e]
 *
 *     dispatch.dispatch(x, ids, weights, s);
 *     experts.gemmAndCombine(w, y, s);   // y[t] = sum_k weights[t][k] (x[t] W_e(t,k)^T), n = hidden
 *
 *     experts.forward(x, ids, weights, tokens, w, y, s);   // the same three, each fed by the one before
 *     iris.synchronize(s);
 * }
 * }</pre>
 *
 * <h2>What it computes</h2>
 * {@link #gemm}: for every local expert l and every row j below {@code counts[l]} (read on the
 * device, never by the host), {@code out[l][j] = bf16(received[l][j] x weights[l]^T)}, accumulated
 * in f32 and rounded once; rows at or past the count are left as they were. {@link
 * #gemmAndCombine}: the same rows, each written into its source rank's combine staging at the
 * route it came from, then {@link MoeCombine}'s weighted sum; the result has the same bits as
 * {@link #gemm} followed by {@link MoeCombine#combine} of its output, on every run. {@link
 * #dispatchAndGemm} and {@link #forward} compute what the dispatch followed by {@link #gemm} or
 * {@link #gemmAndCombine} does, bit for bit.
 *
 * <h2>How</h2>
 * The library's persistent GEMM (iris/gemm/persistent.cuh) with a tile scheduler over (expert,
 * tile) units: each CTA reads the counts once into a table of units in shared memory, so the units
 * follow the real rows, rounded up to 128; the grid is sized by the capacity. One tensor map covers
 * the whole receive buffer ([l * capacity, hidden]) and one the weights ([l * n, hidden]); a tile's
 * rows past its expert's count are computed from stale rows and masked in the epilogue. After the
 * fused kernel, a one-block kernel signals "results sent" to every peer and waits for theirs (the
 * wait of {@link MoeSites#RESULTS}, bounded by the device timeout), and the weighted sum runs as in
 * {@link MoeCombine}.
 *
 * <p>Fed by the dispatch: the dispatch's copying kernel sends the rows a tile of 128 rows of one
 * expert at a time, in the order of the GEMM's units, on a sixth of the SMs, and counts each tile's
 * rows arrived on its owner. The GEMM kernel is launched to start as soon as every block of that
 * kernel runs (programmatic dependent launch) and takes the other SMs; its CTAs claim units in that
 * order as they become free, so the CTAs that start once the copy is done take what is left; the
 * producer waits, before a tile's first loads, until the tile's count reaches the rows its expert's
 * count puts there (wait site {@link MoeSites#TILE_ROWS}), and the kernel ends only after the
 * copying kernel has. Whether that pays depends on the link the rows cross: on one GPU (one rank,
 * the copy bound by memory) the fed layer measured 0.89-1.00x the sequence's speed, and the fused
 * one about 1x; over NVLink it is not measured yet (docs/benchmarks/moe.md).
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>The dispatch's capacity is a multiple of {@link Gemm#TILE_M} (128), and {@code n} a positive
 *     multiple of {@link Gemm#NARROW_TILE_N} (128): a GEMM tile then never straddles two experts.
 *     {@link #gemmAndCombine} needs {@code n == hidden}.</li>
 * <li>{@code weights}: BF16 [localExperts, n, hidden] (or [localExperts * n, hidden]); {@code out}
 *     of {@link #gemm}: BF16 [localExperts, capacity, n] (or [localExperts * capacity, n]), apart
 *     from the receive buffer; {@code out} of {@link #gemmAndCombine}: BF16 [rows, hidden], rows at
 *     least the dispatch's tokens.</li>
 * <li>{@link #gemmAndCombine} is the combine of the last dispatch, like {@link MoeCombine#combine}:
 *     at most one per dispatch, on every rank alike, on the dispatch's stream.</li>
 * <li>Creating one is local and allocates nothing on the heap; calls only enqueue. Checks as {@link
 *     MoeDispatch}'s: {@link IllegalArgumentException} naming the rank, the call, the argument and
 *     what was expected, nothing launched. NVIDIA Hopper only (wgmma, TMA).</li>
 * </ul>
 */
public final class MoeExpertGemm implements AutoCloseable {
    /** The kernel module ({@code moe_expert_gemm.cu}). */
    static final String MODULE = "moe_expert_gemm";
    private static final String GEMM_KERNEL = "moe_expert_gemm_n";
    private static final String COMBINE_KERNEL = "moe_expert_gemm_combine_n";
    private static final String FED_GEMM_KERNEL = "moe_expert_gemm_fed_n";
    private static final String FED_COMBINE_KERNEL = "moe_expert_gemm_fed_combine_n";
    /** Tensor maps kept per instance (a few weight tensors). */
    private static final int MAP_CACHE_ENTRIES = 8;

    private final MoeDispatch dispatch;
    private final MoeConfig config;
    private final int rank;
    private final int localExperts;
    private final int n;
    private final int tileN;
    private final int blocks;
    private final Kernel gemmKernel;
    private final Kernel combineKernel;
    private final Kernel fedGemmKernel;
    private final Kernel fedCombineKernel;
    private final Kernel publishKernel;
    private final Kernel reduceKernel;
    private final MoeExpertGemmArgs args;
    private final MoeArgs combineArgs;
    private final TensorMapCache maps = new TensorMapCache(MAP_CACHE_ENTRIES, Gemm.SWIZZLE_BYTES);
    private final AtomicBoolean closed = new AtomicBoolean();

    private MoeExpertGemm(MoeDispatch dispatch, int n) {
        this.dispatch = dispatch;
        this.config = dispatch.config();
        this.rank = dispatch.rank;
        this.localExperts = dispatch.localExperts();
        this.n = n;
        this.tileN = MoeExpertGemmChecks.tileN(n);
        this.blocks = blocks(dispatch.iris.deviceProperties().multiprocessorCount(), localExperts, config.capacity(), n);
        KernelModule gemms = dispatch.library.module(MODULE);
        this.gemmKernel = gemms.kernel(GEMM_KERNEL + tileN);
        this.combineKernel = gemms.kernel(COMBINE_KERNEL + tileN);
        this.fedGemmKernel = gemms.kernel(FED_GEMM_KERNEL + tileN);
        this.fedCombineKernel = gemms.kernel(FED_COMBINE_KERNEL + tileN);
        for (Kernel k : List.of(gemmKernel, combineKernel, fedGemmKernel, fedCombineKernel)) {
            k.setMaxDynamicSharedBytes(Gemm.HOOKS_SHARED_BYTES);
        }
        KernelModule combine = dispatch.library.module(MoeDispatch.COMBINE_MODULE);
        this.publishKernel = combine.kernel(MoeDispatch.COMBINE_PUBLISH_KERNEL);
        this.reduceKernel = combine.kernel(MoeDispatch.COMBINE_REDUCE_KERNEL);
        byte[] ctx = dispatch.iris.deviceContext().bytes();
        MoeArgs.Buffers b = dispatch.buffers();
        long arrivals = b.workspace() + dispatch.layout().arrivals();
        long claims = b.workspace() + MoeLayout.CLAIMS;
        this.args = new MoeExpertGemmArgs(ctx, b.counts(), b.sources(), arrivals, claims, localExperts, config.capacity(), n,
                config.hidden());
        this.combineArgs = new MoeArgs(ctx, config, dispatch.layout(), b);
    }

    /**
     * The experts' GEMM of {@code dispatch}'s calls, {@code n} output columns per expert (see the
     * class comment for what the layer needs). Local: allocates nothing on the heap, loads the kernels.
     */
    public static MoeExpertGemm create(MoeDispatch dispatch, int n) {
        final String call = "MoeExpertGemm.create";
        if (dispatch == null) throw new IllegalArgumentException(call + ": dispatch must not be null");
        dispatch.ensureOpen(call);
        MoeExpertGemmChecks.layer(dispatch.rank, call, dispatch.config(), dispatch.localExperts(), n);
        return new MoeExpertGemm(dispatch, n);
    }

    /** Every kernel this class looks up, by module: what the fatbins must hold. */
    static Map<String, List<String>> kernelNames() {
        List<String> gemms = new ArrayList<>();
        for (String k : List.of(GEMM_KERNEL, COMBINE_KERNEL, FED_GEMM_KERNEL, FED_COMBINE_KERNEL)) {
            gemms.add(k + Gemm.TILE_N);
            gemms.add(k + Gemm.NARROW_TILE_N);
        }
        return Map.of(MODULE, gemms,
                MoeDispatch.COMBINE_MODULE, List.of(MoeDispatch.COMBINE_PUBLISH_KERNEL, MoeDispatch.COMBINE_REDUCE_KERNEL));
    }

    /**
     * CTAs of one launch: one per unit of the capacity bound (every expert full), at most one per SM
     * (the kernel is persistent).
     */
    static int blocks(int multiprocessors, int localExperts, int capacity, int n) {
        return (int) Math.max(1, Math.min(multiprocessors, maxUnits(localExperts, capacity, n)));
    }

    /** The most units a launch can have: every expert's tile rows up to the capacity, by the tile columns of n. */
    static long maxUnits(int localExperts, int capacity, int n) {
        return (long) localExperts * (capacity / Gemm.TILE_M) * (n / MoeExpertGemmChecks.tileN(n));
    }

    /**
     * {@code out[l][j] = received[l][j] x weights[l]^T} for every local expert l and every row j
     * below the last dispatch's {@code counts[l]}, in one launch on {@code stream} (see the class
     * comment); rows past the counts are not written.
     */
    public void gemm(SymTensor weights, SymTensor out, Stream stream) {
        final String call = "MoeExpertGemm.gemm";
        synchronized (dispatch) {
            ensureOpen(call);
            checkExpertRows(call, weights, out, stream);
            launch(gemmKernel, weights, out.deviceAddress(), stream, false);
        }
    }

    /**
     * {@link MoeDispatch#dispatch} of {@code numTokens} tokens and {@link #gemm} of what it
     * delivers, the GEMM fed by the dispatch: it runs beside the dispatch's copy and starts each
     * tile of 128 received rows as soon as they have arrived from every rank, instead of after the
     * last row. {@code tokens}, {@code expertIds} and {@code routeWeights} as {@link
     * MoeDispatch#dispatch}'s, {@code weights} and {@code out} as {@link #gemm}'s; the same result,
     * bit for bit. Everything is checked before anything is launched.
     */
    public void dispatchAndGemm(SymTensor tokens, SymTensor expertIds, SymTensor routeWeights, int numTokens, SymTensor weights,
                                SymTensor out, Stream stream) {
        final String call = "MoeExpertGemm.dispatchAndGemm";
        synchronized (dispatch) {
            ensureOpen(call);
            checkExpertRows(call, weights, out, stream);
            MoeChecks.dispatchInputs(rank, call, config, numTokens, tokens, expertIds, routeWeights, dispatch.heap(), stream);
            dispatch.dispatchFeeding(tokens, expertIds, routeWeights, numTokens, stream);
            launch(fedGemmKernel, weights, out.deviceAddress(), stream, true);
        }
    }

    /**
     * The experts' GEMM with combine as its epilogue, as the combine of the last dispatch: writes
     * each of its tokens' weighted sum of expert outputs into {@code out} ([rows, hidden], rows at
     * least the dispatch's tokens). Needs {@code n == hidden}.
     */
    public void gemmAndCombine(SymTensor weights, SymTensor out, Stream stream) {
        final String call = "MoeExpertGemm.gemmAndCombine";
        synchronized (dispatch) {
            ensureOpen(call);
            int numTokens = dispatch.pendingTokens(call);
            checkLayerOutput(call, weights, out, numTokens, stream);
            launch(combineKernel, weights, dispatch.buffers().staging(), stream, false);
            finishCombine(out, numTokens, stream);
        }
    }

    /**
     * The whole expert layer, each stage fed by the one before: {@link MoeDispatch#dispatch} of
     * {@code numTokens} tokens, the experts' GEMM starting each tile as its rows arrive (as {@link
     * #dispatchAndGemm}), and combine as its epilogue (as {@link #gemmAndCombine}): {@code out[t] =
     * sum_k routeWeights[t][k] (tokens[t] W_e(t,k)^T)} for this rank's tokens, the same bits as the
     * three in sequence. Needs {@code n == hidden}; {@code out}: BF16 [rows, hidden], rows at least
     * {@code numTokens}. Everything is checked before anything is launched.
     */
    public void forward(SymTensor tokens, SymTensor expertIds, SymTensor routeWeights, int numTokens, SymTensor weights,
                        SymTensor out, Stream stream) {
        final String call = "MoeExpertGemm.forward";
        synchronized (dispatch) {
            ensureOpen(call);
            MoeChecks.dispatchInputs(rank, call, config, numTokens, tokens, expertIds, routeWeights, dispatch.heap(), stream);
            checkLayerOutput(call, weights, out, numTokens, stream);
            dispatch.dispatchFeeding(tokens, expertIds, routeWeights, numTokens, stream);
            launch(fedCombineKernel, weights, dispatch.buffers().staging(), stream, true);
            finishCombine(out, numTokens, stream);
        }
    }

    /** Output columns per expert. */
    public int n() {
        return n;
    }

    /** Columns of the kernel's output tiles: {@link Gemm#TILE_N} where it divides n, else {@link Gemm#NARROW_TILE_N}. */
    public int tileN() {
        return tileN;
    }

    /** The launch of the GEMM kernels: {@link #blocks} CTAs of {@value Gemm#THREADS} threads, {@value Gemm#HOOKS_SHARED_BYTES} bytes of shared memory. */
    public LaunchShape launchShape() {
        return LaunchShape.of(blocks, Gemm.THREADS).withSharedBytes(Gemm.HOOKS_SHARED_BYTES);
    }

    public MoeDispatch dispatch() {
        return dispatch;
    }

    private void checkWeights(String call, SymTensor weights, Stream stream) {
        Operand w = MoeChecks.operand(rank, call, "weights", weights, dispatch.heap());
        TensorChecks.notNull(rank, call, "stream", stream);
        MoeExpertGemmChecks.weights(rank, call, w, config.dtype(), localExperts, n, config.hidden());
    }

    /** The operands of {@link #gemm}: the weights, and an output [localExperts, capacity, n] apart from the receive buffer. */
    private void checkExpertRows(String call, SymTensor weights, SymTensor out, Stream stream) {
        checkWeights(call, weights, stream);
        Operand o = MoeChecks.operand(rank, call, "out", out, dispatch.heap());
        MoeExpertGemmChecks.outputs(rank, call, o, config.dtype(), localExperts, config.capacity(), n);
        SymTensor recv = dispatch.received();
        MoeExpertGemmChecks.disjoint(rank, call, "out", out.deviceAddress(), out.byteSize(), recv.deviceAddress(), recv.byteSize());
    }

    /** The operands of a layer with combine: n == hidden, the weights, and an output [rows >= numTokens, hidden]. */
    private void checkLayerOutput(String call, SymTensor weights, SymTensor out, int numTokens, Stream stream) {
        MoeExpertGemmChecks.combinable(rank, call, n, config.hidden());
        checkWeights(call, weights, stream);
        Operand o = MoeChecks.operand(rank, call, "out", out, dispatch.heap());
        MoeChecks.matrix(rank, call, o, config.dtype(), config.hidden(), numTokens, "hidden");
    }

    /**
     * One GEMM kernel over the receive buffer and {@code weights}, its rows going to {@code rowsTo};
     * {@code fed}: launched to start beside the dispatch's copying kernel ahead of it on the stream.
     */
    private void launch(Kernel kernel, SymTensor weights, long rowsTo, Stream stream, boolean fed) {
        args.maps(receivedMap(), weightsMap(weights));
        kernel.launch(launchShape(), stream, args.call(rowsTo), fed);
    }

    /** After a GEMM with combine as its epilogue: the peers' rows are in, then each token's weighted sum. */
    private void finishCombine(SymTensor out, int numTokens, Stream stream) {
        var a = combineArgs.combine(0, out.deviceAddress(), numTokens);
        publishKernel.launch(LaunchShape.of(1, MoeLayout.THREADS), stream, a, false);
        reduceKernel.launch(LaunchShape.of(MoeLayout.rowBlocks(numTokens, dispatch.rowBlockLimit), MoeLayout.THREADS), stream, a,
                false);
        dispatch.combined();
    }

    /** A: the whole receive buffer, [localExperts * capacity, hidden]. */
    private TensorMap receivedMap() {
        int hidden = config.hidden();
        long rows = (long) localExperts * config.capacity();
        return MainloopMaps.operandMapA(maps, DType.BF16, dispatch.received().deviceAddress(), rows, hidden, hidden * 2L);
    }

    /** B: every expert's weight as one NK matrix, [localExperts * n, hidden]. */
    private TensorMap weightsMap(SymTensor weights) {
        int hidden = config.hidden();
        return MainloopMaps.operandMapB(maps, DType.BF16, weights.deviceAddress(), GemmLayout.NK, (long) localExperts * n, hidden,
                hidden * 2L, tileN);
    }

    private void ensureOpen(String call) {
        dispatch.ensureOpen(call);
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + call + " called after MoeExpertGemm.close()");
        }
    }

    /** Releases the argument structs and the tensor maps; the buffers are the dispatch's. Safe to call twice. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            synchronized (dispatch) {
                maps.clear();
                args.close();
                combineArgs.close();
            }
        }
    }

    @Override
    public String toString() {
        return "MoeExpertGemm(n " + n + ", tileN " + tileN + ", " + dispatch + (closed.get() ? ", closed" : "") + ")";
    }
}

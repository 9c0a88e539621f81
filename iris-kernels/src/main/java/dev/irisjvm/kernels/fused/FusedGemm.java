package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceBarrier;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.NodeTeamOperations;
import dev.irisjvm.kernels.MainloopMaps;
import dev.irisjvm.kernels.TensorMapCache;
import dev.irisjvm.kernels.fused.FusedChecks.Operand;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.runtime.abi.iris_fused_args;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.javacpp.LongPointer;

/**
 * What the four fused GEMM + communication operations share: creation (collective: checks, kernel
 * loading, the workspace on the symmetric heap), the tensor maps, the call protocol (epochs,
 * resets, the closing barrier), tracing and close. See {@link GemmAllScatter}, {@link
 * GemmAllReduce}, {@link GemmReduceScatter} and {@link AllGatherGemm}.
 *
 * <h2>Contract shared by every operation</h2>
 * <ul>
 * <li><b>Within a node.</b> The operations serve the node team ({@link dev.irisjvm.core.Iris#node()},
 *     every rank on a job of one node): tensor parallelism stays inside a node, and "ranks" below are
 *     node ranks. Creation refuses a job of several nodes whose node holds one rank.</li>
 * <li><b>Collective.</b> Creation and {@link #close()} are collective: every rank creates the
 *     instance with the same shape and {@link FusedConfig} (checked), in the same order relative to
 *     its other symmetric allocations. Every rank then makes the same calls in the same order, in
 *     the same form ({@code run} or {@code runReplayable}), with tensors of the same shapes;
 *     tensors that peers reach (named per operation) are symmetric: the same heap tensor on every
 *     rank.</li>
 * <li><b>Stream-ordered.</b> A call only enqueues work on the given stream: for all-scatter (and
 *     every replayable call) a device barrier of all ranks first ({@link FusedOp#startsWithBarrier}),
 *     the kernel, then (all but all-gather + GEMM, whose flags do the same) a device barrier of all
 *     ranks on the same stream ({@link Iris#barrier(Stream)}), which publishes the stores into peers.
 *     Whatever a rank enqueued on that stream before a call (a copy of the previous call's C, the
 *     next layer) is done before any peer writes into its buffers. No host synchronization and no
 *     device allocation: a call may be captured into a CUDA graph (see the next point). The TMA
 *     descriptors of a call's tensors are encoded on the host the first time they are seen and
 *     cached (up to {@value #MAP_CACHE_ENTRIES}). A call of {@link
 *     FusedVariant#UNFUSED} enqueues the library's GEMM and collective instead, whose own flags meet
 *     the peers.</li>
 * <li><b>Epochs and CUDA graphs.</b> The kernels' flags are compared with a call counter (the
 *     epoch) that is a kernel argument. {@code run} passes a new epoch each call, so back-to-back
 *     calls need no reset. A CUDA graph replays the epoch it captured, so a call that is to be
 *     captured must be made with {@code runReplayable}: it zeroes the operation's flags first (and,
 *     where peers write them, meets the other ranks with one more barrier) and runs with epoch 1.
 *     Its replays stay correct, in any interleaving with {@code run} calls. Calling {@code run}
 *     while capturing would replay a stale epoch: the waits would pass at once and the output
 *     would be wrong, so {@code run} refuses a capturing stream.</li>
 * <li><b>Errors.</b> Arguments are checked before anything is enqueued; a failure throws {@link
 *     IllegalArgumentException} naming the rank, the class, the argument and what was expected, and
 *     leaves the instance usable. Device-side errors (a peer that never makes the matching call:
 *     every wait is bounded by the Iris device timeout) surface at the next {@link
 *     Iris#synchronize}, naming a wait site that {@link FusedSites#describe} explains.</li>
 * <li><b>Residency.</b> At most one block per SM ({@link FusedConfig#maxBlocks()} caps it
 *     further), of the size {@link #launchShape()} says. Blocks wait for peers and for their own
 *     warps, and never for a block of their own grid that may not have started: all-gather's pieces
 *     of A that a block not yet resident owns are pushed by the blocks that run, and the two halves
 *     of a split-K tile meet in arrival order (the first stores, the second waits for those stores).
 *     So work that holds SMs meanwhile (another stream, another process, an MPS limit) slows a call
 *     down, however few SMs it leaves, and never stalls it into the device timeout.</li>
 * <li><b>World size 1</b> is accepted: every loop over peers is empty, so a call is the plain GEMM
 *     plus a barrier. (The GPU tests run two ranks.)</li>
 * <li><b>GPUs.</b> NVIDIA, compute capability 8.0 or later. {@link FusedConfig#mainloop()} chooses
 *     the kernels as {@link GemmMainloop} does for the GEMM: on Hopper (9.0) the wgmma/TMA ones,
 *     elsewhere, or when asked for ({@code FusedConfig.withMainloop(GemmMainloop.PORTABLE)},
 *     {@value GemmMainloop#VARIABLE}{@code =portable}), the portable ones ({@value
 *     FusedOp#PORTABLE_MODULE}: mma.sync, the same hooks, the EPILOGUE variant, 128 x {@value
 *     Gemm#TILE_N} tiles, no split-K, no tracing). Creation on an older GPU, on HIP, or on a GPU
 *     that cannot run the chosen kernels throws {@link dev.irisjvm.core.IrisPlatformException}
 *     naming the GPU, its compute capability and the requirement.</li>
 * <li>Calls on one instance are serialized (they share the kernels' argument struct,
 *     {@code iris_fused_args} of iris/abi/fused.h, and the epoch).</li>
 * </ul>
 */
public abstract sealed class FusedGemm implements AutoCloseable
        permits GemmAllScatter, SplitKGemm, AllGatherGemm {
    /** Tensor maps kept per instance (least recently used ones are dropped). */
    public static final int MAP_CACHE_ENTRIES = 64;
    /** The epoch of a replayable call: its flags were zeroed just before. Eager epochs start above it. */
    static final long REPLAY_EPOCH = 1;

    private static final DType[] INPUTS = {DType.BF16, DType.F16};

    final Iris iris;
    final int rank;
    final int world;
    final FusedOp op;
    final FusedConfig config;
    final GemmMainloop mainloop;
    final FusedVariant variant;
    /** The kernel's M, N and K (all-scatter: N is this rank's columns; the reductions: K is this rank's share). */
    final int m;
    final int n;
    final int k;
    /** "rank 0: GemmAllReduce", the start of every message. */
    final String who;

    private final DeviceProperties device;
    /** Columns per output tile of the loaded kernels ({@link FusedOp#tileN}). */
    private final int tileN;
    /** Units of K per tile: 1, or 2 ({@link FusedOp#splitK}). */
    private final int splitK;
    private final int blocks;
    private final KernelLibrary library;
    /** [input: bf16, f16][layout: nk, kn], of the configured variant, traced or not as configured. */
    private final Kernel[][] kernels;
    private final FusedWorkspace workspace;
    /** This instance's device barrier: its calls' barriers pair only with its own on the peers. */
    private final DeviceBarrier barrier;
    private final DeviceMemory traceBuffer;
    private final long traceRecords;
    private final FusedArgs args;
    /** The GEMM and the collective of an UNFUSED instance's calls (null for the others). */
    private final UnfusedSequence unfused;
    private final TensorMapCache maps = new TensorMapCache(MAP_CACHE_ENTRIES, Gemm.SWIZZLE_BYTES);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The last eager epoch (see {@link #begin}). */
    private long epoch;
    private long calls;

    /** What creation gathered, handed to the constructor. */
    record Parts(Iris iris, FusedOp op, FusedConfig config, GemmMainloop mainloop, FusedVariant variant, int m, int n, int k,
                 DeviceProperties device, int tileN, int splitK, int blocks, KernelLibrary library, Kernel[][] kernels,
                 FusedWorkspace workspace, DeviceBarrier barrier, DeviceMemory traceBuffer, long traceRecords,
                 UnfusedSequence unfused) {}

    FusedGemm(Parts p) {
        this.iris = p.iris();
        this.rank = p.iris().node().index();
        this.world = p.iris().node().size();
        this.op = p.op();
        this.config = p.config();
        this.mainloop = p.mainloop();
        this.variant = p.variant();
        this.m = p.m();
        this.n = p.n();
        this.k = p.k();
        this.who = FusedChecks.who(rank, op);
        this.device = p.device();
        this.tileN = p.tileN();
        this.splitK = p.splitK();
        this.blocks = p.blocks();
        this.library = p.library();
        this.kernels = p.kernels();
        this.workspace = p.workspace();
        this.barrier = p.barrier();
        this.traceBuffer = p.traceBuffer();
        this.traceRecords = p.traceRecords();
        this.unfused = p.unfused();
        this.args = new FusedArgs(p.iris().deviceContext().bytes(), workspace.partialsAddress(), workspace.flagsAddress(),
                traceBuffer == null ? 0 : traceBuffer.address(), m, n, k, config.groupM(), splitK);
        // Eager epochs start above REPLAY_EPOCH, the value a replayed call leaves in the flags.
        this.epoch = REPLAY_EPOCH;
    }

    // ---- creation (collective) ---------------------------------------------------------------------

    /**
     * Collective: checks the problem and the GPU, loads the kernels, meets the other ranks (every
     * rank learns whether any failed, and that all passed the same shape and config), allocates and
     * zeroes the workspace on the symmetric heap, allocates the trace buffer when tracing, and meets
     * again so that no peer signals into a workspace before it is zeroed.
     */
    static Parts prepare(Iris iris, FusedOp op, long m, long n, long k, FusedConfig config) {
        if (iris == null) {
            throw new IllegalArgumentException(op.className() + ".create: iris must not be null");
        }
        NodeTeamOperations.requirePeers(iris, op.className());
        int rank = iris.node().index();
        int world = iris.node().size();
        String who = FusedChecks.who(rank, op);
        KernelLibrary library = null;
        Kernel[][] kernels = null;
        GemmMainloop mainloop = null;
        FusedVariant variant = null;
        int limit = 0;
        int tileN = Gemm.TILE_N;
        int splitK = 1;
        RuntimeException local = null;
        DeviceProperties device = iris.deviceProperties();
        try {
            FusedChecks.notNull(who, "config", config);
            FusedChecks.problem(who, op, m, n, k, world);
            limit = config.maxBlocks() == 0 ? device.multiprocessorCount()
                    : Math.min(config.maxBlocks(), device.multiprocessorCount());
            mainloop = config.mainloop().resolve(device);
            boolean portable = mainloop == GemmMainloop.PORTABLE;
            variant = config.variant().resolve(op, mainloop, m, n, k, world, limit);
            if (variant == FusedVariant.UNFUSED && config.variant() == FusedVariant.AUTO && config.tracing()
                    && op.kernelsTakeRows(m, world)) {
                variant = variant.kernels(mainloop);  // what tracing asks for is the fused kernel's timeline
            }
            FusedChecks.variant(who, op, mainloop, variant);
            FusedChecks.rows(who, op, variant, m, world);
            FusedChecks.tileN(who, op, mainloop, config.tileN());
            FusedChecks.tracing(who, op, mainloop, variant, config.tracing(), m, world);
            FusedChecks.device(who, op, mainloop, Platform.current(), device);
            boolean wide = config.tileN() == 0 || config.tileN() == Gemm.TILE_N;
            splitK = config.splitK() != 0 ? config.splitK() : wide && !portable ? op.splitK(m, n, k, limit) : 1;
            FusedChecks.splitK(who, op, mainloop, splitK, k);
            tileN = config.tileN() != 0 ? config.tileN() : portable || splitK == 2 ? Gemm.TILE_N : op.tileN(m, n, limit);
            library = KernelLibrary.forIris(iris);  // checked variants in checked mode
            kernels = load(library, op, mainloop, variant.kernels(mainloop), tileN, config.tracing());
        } catch (RuntimeException e) {
            local = e;
        }
        // The meeting: whoever failed says why, everyone compares what they were asked to create and
        // the mainloop and variant it chose (IRIS_GEMM_MAINLOOP and the SMs, which AUTO's choice
        // counts, may differ between ranks).
        String mine = describe(op, m, n, k, config) + (mainloop == null ? "" : " runs " + mainloop + " " + variant);
        byte[][] all;
        try {
            all = iris.allGather(((local == null ? "ok " : "failed ") + mine + "\n"
                    + (local == null ? "" : String.valueOf(local.getMessage()))).getBytes(StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            if (library != null) library.close();
            if (local != null) e.addSuppressed(local);
            throw e;
        }
        RuntimeException failure = local;
        for (int r = 0; r < all.length && failure == null; r++) {
            String[] theirs = new String(all[r], StandardCharsets.UTF_8).split("\n", 2);
            if (theirs[0].startsWith("failed ")) {
                failure = new IrisException(who + ": not created because rank " + r + " could not create it: " + theirs[1]);
            } else if (!theirs[0].equals("ok " + mine)) {
                failure = FusedChecks.fail(who, "rank " + r + " creates " + theirs[0].substring(3) + ", this rank " + mine
                        + "; every rank must create it with the same shape and config");
            }
        }
        if (failure != null) {
            if (library != null) library.close();
            throw failure;
        }
        FusedWorkspace workspace = null;
        DeviceBarrier barrier = null;
        DeviceMemory trace = null;
        UnfusedSequence unfused = null;
        try {
            int blocks = blocks(op, world, limit, FusedWorkspace.tiles(m, n, tileN) * splitK, splitK);
            workspace = FusedWorkspace.allocate(iris.heap(), op, variant.kernels(mainloop), m, n, k, world, tileN, splitK, blocks);
            barrier = iris.newBarrier();
            long records = FusedWorkspace.traceRecords(op, m, n, k, world, tileN, splitK);
            if (config.tracing()) {
                trace = DeviceMemory.allocate(records * FusedWorkspace.TRACE_RECORD_BYTES);
            }
            if (variant == FusedVariant.UNFUSED) {
                unfused = UnfusedSequence.create(iris, op, mainloop, m, n);
            }
            iris.hostBarrier();  // every rank's flags are zero before any kernel can signal into them
            return new Parts(iris, op, config, mainloop, variant, (int) m, (int) n, (int) k, device, tileN, splitK, blocks,
                    library, kernels, workspace, barrier, trace, records, unfused);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, unfused, trace, barrier, workspace, library);
            throw e;
        }
    }

    /**
     * The blocks of a launch: one per unit up to {@code limit}; all-gather on several ranks takes
     * all {@code limit}, since its blocks beyond the units still push rows of A (at 1024 x 1792 x
     * 8192 on 132 SMs, 112 split-K units left 20 SMs idle and the push took three rounds instead
     * of two); with split-K over several rounds an even number, so that the two halves of a tile run
     * in the same round on neighbouring blocks, where the second to arrive waits least for the first
     * (fused/split_k_exchange.cuh; any number would be correct).
     */
    static int blocks(FusedOp op, int world, int limit, long units, int splitK) {
        boolean pushes = op == FusedOp.ALL_GATHER && world > 1;
        int blocks = (int) Math.max(1, pushes ? limit : Math.min(limit, units));
        return splitK == 2 && blocks < units && blocks > 1 ? blocks & ~1 : blocks;
    }

    /** "GemmAllReduce M 4096 N 4096 K 2048 groupM 8 SPARE_WARPS untraced maxBlocks 0 tileN 0 splitK 0": what ranks must agree on. */
    static String describe(FusedOp op, long m, long n, long k, FusedConfig c) {
        return op.className() + " M " + m + " N " + n + " K " + k + (c == null ? " (no config)"
                : " groupM " + c.groupM() + " " + c.variant() + (c.tracing() ? " traced" : " untraced") + " maxBlocks "
                + c.maxBlocks() + " tileN " + c.tileN() + " splitK " + c.splitK());
    }

    private static Kernel[][] load(KernelLibrary library, FusedOp op, GemmMainloop mainloop, FusedVariant variant, int tileN,
                                   boolean traced) {
        boolean portable = mainloop == GemmMainloop.PORTABLE;
        KernelModule module = library.module(op.module(mainloop));
        Kernel[][] k = new Kernel[INPUTS.length][GemmLayout.values().length];
        for (int i = 0; i < INPUTS.length; i++) {
            for (GemmLayout layout : GemmLayout.values()) {
                Kernel kernel = module.kernel(portable ? op.portableKernelName(INPUTS[i], layout)
                        : op.kernelName(variant, INPUTS[i], layout, tileN, traced));
                kernel.setMaxDynamicSharedBytes(portable ? FusedOp.PORTABLE_SHARED_BYTES : Gemm.HOOKS_SHARED_BYTES);
                k[i][layout.ordinal()] = kernel;
            }
        }
        return k;
    }

    // ---- facts -------------------------------------------------------------------------------------

    public FusedOp op() {
        return op;
    }

    public FusedConfig config() {
        return config;
    }

    /** The mainloop the kernels run: {@link GemmMainloop#HOPPER} or {@link GemmMainloop#PORTABLE}, never AUTO. */
    public GemmMainloop mainloop() {
        return mainloop;
    }

    /** The variant the kernels run (AUTO resolved for this shape). */
    public FusedVariant variant() {
        return variant;
    }

    /** Columns per output tile: the config's, else {@link FusedOp#tileN}'s choice for this shape. */
    public int tileN() {
        return tileN;
    }

    /** Output tiles per call: ceil(M / 128) x ceil(N / {@link #tileN()}) of the kernel's M x N. */
    public int tiles() {
        return (int) FusedWorkspace.tiles(m, n, tileN);
    }

    /** Units of K per tile: the config's, else {@link FusedOp#splitK}'s choice for this shape (1 or 2). */
    public int splitK() {
        return splitK;
    }

    /** What the blocks compute, one at a time: {@link #tiles()} x {@link #splitK()}. */
    public int units() {
        return tiles() * splitK;
    }

    /**
     * Blocks per launch: min(SMs or {@link FusedConfig#maxBlocks()}, units), even with split-K over
     * several rounds; all-gather on several ranks takes every block it may, the ones without a unit
     * pushing rows of A.
     */
    public int blocks() {
        return blocks;
    }

    /**
     * The launch: {@link #blocks()} blocks of {@value Gemm#THREADS} threads and {@value
     * Gemm#HOOKS_SHARED_BYTES} bytes of shared memory (portable mainloop: {@value FusedOp#PORTABLE_THREADS}
     * and {@value FusedOp#PORTABLE_SHARED_BYTES}).
     */
    public LaunchShape launchShape() {
        return mainloop == GemmMainloop.PORTABLE
                ? LaunchShape.of(blocks, FusedOp.PORTABLE_THREADS).withSharedBytes(FusedOp.PORTABLE_SHARED_BYTES)
                : LaunchShape.of(blocks, Gemm.THREADS).withSharedBytes(Gemm.HOOKS_SHARED_BYTES);
    }

    /** Bytes of the symmetric heap this instance holds on this rank. */
    public long workspaceBytes() {
        return workspace.bytes();
    }

    /** Calls enqueued so far (eager and replayable). */
    public synchronized long calls() {
        return calls;
    }

    /** The GPU the kernels were loaded for. */
    public DeviceProperties device() {
        return device;
    }

    /** Tensor maps cached now. */
    public synchronized int cachedTensorMaps() {
        return maps.size();
    }

    // ---- calls -------------------------------------------------------------------------------------

    /**
     * Enqueues one call on {@code stream}: the kernel, then (but for all-gather) a device barrier of
     * all ranks. A, B (as {@code layout} says), the optional bias and C as the operation's class
     * documents them. Not for graph capture: use {@link #runReplayable}.
     *
     * @throws IllegalArgumentException an argument does not fit (nothing was enqueued)
     */
    public final synchronized void run(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream) {
        call(a, b, layout, bias, c, stream, false);
    }

    /**
     * As {@link #run}, in the form whose CUDA-graph replays stay correct: zeroes the operation's flags
     * first (and, where peers write them, meets them with one more barrier), then runs with the
     * fixed epoch 1. Usable eagerly too; every rank must choose the same form for the same call.
     */
    public final synchronized void runReplayable(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c,
                                                 Stream stream) {
        call(a, b, layout, bias, c, stream, true);
    }

    /**
     * The operation's own checks of a call's arguments, after {@link #common} and before {@link
     * #disjoint}; returns C's leading dimension (ldc).
     */
    abstract int check(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c, DType in);

    /** One call: the checks (nothing is enqueued when one fails), the maps, then the protocol around the launch. */
    private void call(SymTensor a, SymTensor b, GemmLayout layout, SymTensor bias, SymTensor c, Stream stream, boolean replayable) {
        ensureOpen();
        Operand oa = operand("A", a);
        Operand ob = operand("B", b);
        Operand obias = operand("bias", bias);
        Operand oc = operand("C", c);
        DType in = common(oa, ob, layout, obias, oc, stream);
        if (!replayable && stream.isCapturing()) {
            // run advances a host-side epoch per call, which a replay would repeat: peers would take
            // stale flags for new ones.
            throw FusedChecks.fail(who, "stream is capturing a CUDA graph, and run's calls cannot be replayed (each"
                    + " has its own epoch); capture runReplayable instead");
        }
        int ldc = check(oa, ob, layout, obias, oc, in);
        disjoint(oc, oa, ob, obias);
        if (unfused != null) {
            if (unfused.takes(ldc)) {
                calls++;
                unfused.run(a, b, layout, op.addsBias(rank) ? bias : null, c, stream);
                return;
            }
            FusedChecks.kernelCall(who, op, m, n, world, ldc);
        }

        if (mainloop == GemmMainloop.HOPPER) {
            args.maps(mapA(in, oa.address(), m, k), mapB(in, ob.address(), layout, n, k));
        }
        long epoch = begin(replayable, stream);
        iris_fused_args struct = callArgs(oa, ob, obias, oc, ldc, epoch);
        kernels[in == DType.BF16 ? 0 : 1][layout.ordinal()].launch(launchShape(), stream, struct, false);
        end(stream);
    }

    /**
     * The call's fields of the kernel's argument struct: A and B (the portable kernels read them
     * through pointers; the Hopper ones only all-gather's gathered A, the rest through the maps), C,
     * the bias (the reductions add it once: rank 0's), C's leading dimension and the epoch.
     */
    private iris_fused_args callArgs(Operand a, Operand b, Operand bias, Operand c, int ldc, long epoch) {
        boolean portable = mainloop == GemmMainloop.PORTABLE;
        Operand added = op.addsBias(rank) ? bias : null;
        return args.call(portable || op == FusedOp.ALL_GATHER ? a.address() : 0, portable ? b.address() : 0, c.address(),
                added == null ? 0 : added.address(), ldc, epoch);
    }

    // ---- the call protocol -------------------------------------------------------------------------

    /**
     * Starts a call on {@code s}: zeroes the trace buffer when tracing; for a replayable call zeroes
     * the flags; meets the peers where the operation starts with a barrier; returns {@link
     * #REPLAY_EPOCH} for a replayable call, otherwise the next eager epoch.
     */
    private long begin(boolean replayable, Stream s) {
        if (traceBuffer != null) {
            Memcpy.memset(traceBuffer.address(), 0, traceBuffer.bytes(), s);
        }
        calls++;
        if (replayable) {
            workspace.zeroFlags(s);
        }
        if (op.startsWithBarrier(replayable)) {
            barrier.enqueue(s);
        }
        return replayable ? REPLAY_EPOCH : ++epoch;
    }

    /** Ends a call: the device barrier, where the operation needs one ({@link FusedOp#endsWithBarrier}). */
    private void end(Stream s) {
        if (op.endsWithBarrier()) {
            barrier.enqueue(s);
        }
    }

    // ---- checks and maps ---------------------------------------------------------------------------

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(who + ": used after close()");
        }
    }

    /** A tensor argument as the checks see it; null stays null. */
    private Operand operand(String name, SymTensor t) {
        if (t == null) {
            return null;
        }
        boolean live = t.isLive();
        return new Operand(name, t.dtype(), t.shape(), live, t.heap() == iris.heap(), live ? t.deviceAddress() : 0,
                t.byteSize(), t.toString());
    }

    /** What every call checks about A, B (layout), the bias and C, before the operation's own checks; returns the input type. */
    private DType common(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c, Stream stream) {
        FusedChecks.notNull(who, "A", a);
        FusedChecks.notNull(who, "B", b);
        FusedChecks.notNull(who, "layout", layout);
        FusedChecks.notNull(who, "C", c);
        FusedChecks.notNull(who, "stream", stream);
        for (Operand t : bias == null ? new Operand[] {a, b, c} : new Operand[] {a, b, c, bias}) {
            FusedChecks.live(who, t);
            FusedChecks.aligned(who, t);
        }
        FusedChecks.inputs(who, a, b);
        FusedChecks.sameType(who, c, a.dtype());
        return a.dtype();
    }

    /** C must not alias what the kernel reads. */
    private void disjoint(Operand c, Operand... inputs) {
        for (Operand in : inputs) {
            if (in != null) {
                FusedChecks.disjoint(who, c, in);
            }
        }
    }

    /** A's map (contiguous M x K), as the GEMM builds it. */
    private TensorMap mapA(DType type, long address, long rows, long cols) {
        return MainloopMaps.operandMapA(maps, type, address, rows, cols, cols * type.byteSize());
    }

    /** B's map (contiguous; N x K for NK, K x N for KN), as the GEMM builds it, for this instance's tile width. */
    private TensorMap mapB(DType type, long address, GemmLayout layout, long n, long k) {
        boolean nk = layout == GemmLayout.NK;
        long cols = nk ? k : n;
        return MainloopMaps.operandMapB(maps, type, address, layout, nk ? n : k, cols, cols * type.byteSize(), tileN);
    }

    // ---- tracing -----------------------------------------------------------------------------------

    /** Whether this instance runs the traced kernels. */
    public boolean tracing() {
        return traceBuffer != null;
    }

    /**
     * The timeline the last call recorded (tracing on): copies the records back on {@code stream}
     * after everything enqueued on it, waits, and raises what a kernel recorded (as {@link
     * Iris#synchronize(Stream)}). Host work: not for use during a capture.
     */
    public synchronized TileTrace readTrace(Stream stream) {
        ensureOpen();
        if (traceBuffer == null) {
            throw new IllegalStateException(who + ": tracing is off; create it with FusedConfig.withTracing(true)");
        }
        FusedChecks.notNull(who, "stream", stream);
        long[] records = new long[Math.toIntExact(traceRecords * 4)];
        try (LongPointer host = new LongPointer(records.length)) {
            Memcpy.deviceToHost(host, traceBuffer.address(), traceRecords * FusedWorkspace.TRACE_RECORD_BYTES, stream);
            iris.synchronize(stream);
            host.get(records);
        }
        long pieces = op == FusedOp.ALL_GATHER ? FusedWorkspace.gatherPieces(m, k, world) : 0;
        return new TileTrace(op, variant, rank, world, m, n, k, units(), pieces, device.multiprocessorCount(), records);
    }

    // ---- close -------------------------------------------------------------------------------------

    /**
     * Collective: frees the workspace and the trace buffer and unloads the kernels. Synchronize the
     * streams the calls ran on first (a call's closing barrier, or all-gather's flags, mean that once
     * this rank's stream is idle, no peer still touches the workspace). Safe to call twice; close it
     * before its Iris.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(unfused, barrier, workspace, traceBuffer, library, this::releaseArguments);
    }

    private synchronized void releaseArguments() {
        maps.clear();
        args.close();
    }

    @Override
    public String toString() {
        return op.className() + "(rank " + rank + "/" + world + ", M " + m + ", N " + n + ", K " + k + " per rank, "
                + mainloop + " mainloop, " + variant.kernelName() + ", groupM " + config.groupM() + ", tiles 128 x " + tileN
                + (splitK > 1 ? ", split-K " + splitK : "") + ", " + blocks + " blocks"
                + (tracing() ? ", traced" : "")
                + (closed.get() ? ", closed" : "") + ")";
    }
}

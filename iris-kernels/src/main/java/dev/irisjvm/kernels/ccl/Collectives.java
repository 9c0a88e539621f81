package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.NodeTeamOperations;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.ccl.CclChecks.Operand;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.javacpp.LongPointer;

/**
 * Device-initiated collectives over the symmetric heap, among the ranks of a node ({@link Iris#node()}:
 * every rank on a job of one node; ranks, roots and counts below are node ranks, indexes in that team): all-reduce (five algorithms), all-gather,
 * reduce-scatter, broadcast, all-to-all and all-to-all-v, on symmetric tensors, enqueued on a
 * stream.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); Collectives ccl = Collectives.create(iris)) {   // collective
 *     SymTensor grad = iris.heap().randn(DType.BF16, 4096, 1024);
 *     SymTensor sum = iris.heap().empty(DType.BF16, 4096, 1024);
 *     Stream s = iris.stream();
 *     ccl.allReduce(grad, sum, ReduceOp.SUM, s);                        // AUTO: one- or two-shot by size
 *     ccl.allReduce(grad, grad, ReduceOp.AVG, AllReduceAlgorithm.TWO_SHOT, s);  // in place
 *     SymTensor all = iris.heap().empty(DType.BF16, iris.node().size() * 4096L, 1024);
 *     ccl.allGather(sum, all, s);
 *     iris.synchronize(s);                                               // raises device errors, if any
 *
 *     s.beginCapture();                                                  // graphs replay them as they are
 *     ccl.allReduce(grad, sum, ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, s);
 *     try (CudaGraph g = s.endCapture()) {
 *         for (int step = 0; step < 100; step++) g.launch(s);            // a fresh call each time
 *     }
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>Creation and {@link #close()} are collective (the workspace is a symmetric allocation).</li>
 * <li>Every rank makes the same calls on an instance in the same order, with tensors of the same
 *     shapes and the same arguments (op, algorithm, root); all-to-all-v's counts differ by rank but
 *     must agree pairwise (rank p's {@code sendCounts[q]} = rank q's {@code recvCounts[p]}).</li>
 * <li>Tensors are symmetric: allocated collectively, so each has the same shape and heap offset
 *     on every rank (the kernels address a peer's copy at this rank's offset). All-to-all-v's
 *     tensors too, whatever the counts: size them for the largest exchange.</li>
 * <li>Calls on one instance run one after another: enqueue them on one stream, or order the
 *     streams with events. Collectives that should run concurrently need an instance each.</li>
 * <li>Every method only enqueues work: no host synchronization, no allocation, nothing that a CUDA
 *     graph capture forbids. The kernels keep a call counter (epoch) in the workspace, so a
 *     captured call replays correctly any number of times. Errors on the device (a peer that
 *     never arrives: every wait is bounded by the Iris device timeout; an all-to-all-v count
 *     mismatch) surface at the next {@link Iris#synchronize}, naming the rank and a wait site
 *     that {@link CclSites#describe(int)} explains.</li>
 * <li>The kernels of one call spin on flags of other ranks, so all their blocks must be resident
 *     at once: the grid is at most one block per SM of the smallest GPU. Work that keeps SMs busy
 *     on other streams meanwhile can delay a collective (never break it, until the timeout).</li>
 * <li>Arguments are checked before anything is launched; a failed check throws {@link
 *     IllegalArgumentException} naming the rank, the call, the argument and what was expected,
 *     and leaves the instance usable.</li>
 * </ul>
 *
 * <p>Reductions take BF16, F16 and F32 and accumulate in float; data movement (all-gather,
 * broadcast, all-to-all, all-to-all-v) takes tensors of any dtype. In-place: {@link #broadcast}
 * always, {@link #allReduce} with algorithms that say so ({@link AllReduceAlgorithm#allowsInPlace()});
 * the other collectives need distinct tensors.
 */
public final class Collectives implements AutoCloseable {
    /** Threads per block of every collective kernel (IRIS_CCL_THREADS, iris/abi/ccl.h). */
    public static final int THREADS = KernelAbi.IRIS_CCL_THREADS;
    /** Most blocks of one launch (IRIS_CCL_MAX_BLOCKS: the flag arrays are sized for it). */
    public static final int MAX_BLOCKS = KernelAbi.IRIS_CCL_MAX_BLOCKS;
    /** Bytes of the workspace before the staging buffers (IRIS_CCL_HEADER_BYTES). */
    public static final long HEADER_BYTES = KernelAbi.IRIS_CCL_HEADER_BYTES;
    /**
     * The inline-flag area after the staging buffers (IRIS_CCL_LL_AREA_BYTES): 2 parities x world
     * slots of packets that carry their call's tag with the payload; see {@link #llMaxBytes(int)}.
     */
    public static final long LL_AREA_BYTES = KernelAbi.IRIS_CCL_LL_AREA_BYTES;

    /**
     * Tuning of an instance; every rank must pass the same options.
     *
     * @param stagingBytes      bytes of each of the two staging buffers (rounded up to 256); ONE_SHOT
     *                          all-reduce takes inputs of up to stagingBytes / world bytes. 0 disables ONE_SHOT.
     * @param maxBlocks         most blocks per launch; 0 = one per SM of the smallest GPU of the job
     *                          (more is never used: the blocks of a call must be co-resident)
     * @param bytesPerBlock     a launch gets one block per this many bytes of work per rank
     * @param allToAllVBlocks   the grid of all-to-all-v, which cannot depend on the counts (they differ by rank)
     * @param overlapLaunches   launch every kernel so that it is scheduled while the kernel ahead of it on
     *                          the stream is still running (programmatic dependent launch, CUDA only): its
     *                          blocks then wait on the device, not in the launch path, for that kernel to
     *                          finish. Back-to-back collectives (eager or in a graph) start sooner; the
     *                          order of their memory accesses is unchanged. On by default: on 2 x H200 it
     *                          took eager back-to-back bf16 all-reduce of 4-64 KiB from 4.4-4.8 to
     *                          3.3-3.6 µs (docs/benchmarks/collectives.md). A plain launch on HIP.
     * @param copyEngineBytes   from how many bytes that each rank sends to each peer the copy engines move the data
     *                          instead of kernels: AUTO all-reduce picks COPY_ENGINE (a peer's part is a shard,
     *                          bytes / world), all-gather copies its input and all-to-all its blocks with them
     *                          ({@link CopyEngineCollectives}). {@link #NEVER} by default: the copy-engine paths
     *                          have not yet been timed on two GPUs (docs/benchmarks/collectives-findings.md), so
     *                          AUTO and the data movement keep the kernels whose speed is measured.
     */
    public record Options(long stagingBytes, int maxBlocks, long bytesPerBlock, int allToAllVBlocks, boolean overlapLaunches,
                          long copyEngineBytes) {
        public static final long DEFAULT_STAGING_BYTES = 16L << 20;
        public static final long DEFAULT_BYTES_PER_BLOCK = 16L << 10;
        public static final int DEFAULT_ALL_TO_ALL_V_BLOCKS = 64;
        /** {@link #copyEngineBytes()} that keeps the copy engines out of AUTO, all-gather and all-to-all. */
        public static final long NEVER = Long.MAX_VALUE;

        public Options {
            if (stagingBytes < 0) {
                throw new IllegalArgumentException("stagingBytes must be >= 0, got " + stagingBytes);
            }
            if (maxBlocks < 0 || maxBlocks > MAX_BLOCKS) {
                throw new IllegalArgumentException("maxBlocks must be in [0, " + MAX_BLOCKS + "] (0: one per SM), got " + maxBlocks);
            }
            if (bytesPerBlock < 1) {
                throw new IllegalArgumentException("bytesPerBlock must be >= 1, got " + bytesPerBlock);
            }
            if (allToAllVBlocks < 1 || allToAllVBlocks > MAX_BLOCKS) {
                throw new IllegalArgumentException("allToAllVBlocks must be in [1, " + MAX_BLOCKS + "], got " + allToAllVBlocks);
            }
            if (copyEngineBytes < 1) {
                throw new IllegalArgumentException("copyEngineBytes must be >= 1 (NEVER: no copy engines), got " + copyEngineBytes);
            }
        }

        public static Options defaults() {
            return new Options(DEFAULT_STAGING_BYTES, 0, DEFAULT_BYTES_PER_BLOCK, DEFAULT_ALL_TO_ALL_V_BLOCKS, true, NEVER);
        }

        public Options withStagingBytes(long bytes) {
            return new Options(bytes, maxBlocks, bytesPerBlock, allToAllVBlocks, overlapLaunches, copyEngineBytes);
        }

        public Options withMaxBlocks(int blocks) {
            return new Options(stagingBytes, blocks, bytesPerBlock, allToAllVBlocks, overlapLaunches, copyEngineBytes);
        }

        public Options withBytesPerBlock(long bytes) {
            return new Options(stagingBytes, maxBlocks, bytes, allToAllVBlocks, overlapLaunches, copyEngineBytes);
        }

        public Options withAllToAllVBlocks(int blocks) {
            return new Options(stagingBytes, maxBlocks, bytesPerBlock, blocks, overlapLaunches, copyEngineBytes);
        }

        public Options withOverlapLaunches(boolean overlap) {
            return new Options(stagingBytes, maxBlocks, bytesPerBlock, allToAllVBlocks, overlap, copyEngineBytes);
        }

        public Options withCopyEngineBytes(long bytes) {
            return new Options(stagingBytes, maxBlocks, bytesPerBlock, allToAllVBlocks, overlapLaunches, bytes);
        }
    }

    private static final String ALL_GATHER_KERNEL = "ccl_all_gather_push";
    private static final String BROADCAST_KERNEL = "ccl_broadcast_push";
    private static final String ALL_TO_ALL_KERNEL = "ccl_all_to_all_push";
    private static final String ALL_TO_ALL_V_KERNEL = "ccl_all_to_all_v_push";

    private static final DType[] REDUCIBLE_ORDER = {DType.BF16, DType.F16, DType.F32};
    private static final String[] TYPE_SUFFIX = {"bf16", "f16", "f32"};
    private static final AllReduceAlgorithm[] ALGORITHMS = {
            AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.RING, AllReduceAlgorithm.ATOMIC};
    private static final ReduceScatterPath[] REDUCE_SCATTER_PATHS = ReduceScatterPath.values();

    private final Iris iris;
    private final int rank;
    private final int world;
    private final Options options;
    private final long stagingBytes;
    private final int maxBlocks;
    private final boolean overlap;
    /** The loaded runtime's: how many payload words an inline-flag packet carries ({@link #llWordsPerPacket}). */
    private final Platform platform;
    private final KernelLibrary library;
    private final SymTensor workspace;
    private final CclArgs args;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** [algorithm][type][op] */
    private final Kernel[][][] allReduceKernels = new Kernel[ALGORITHMS.length][][];
    /** [path][type][op] */
    private final Kernel[][][] reduceScatterKernels = new Kernel[REDUCE_SCATTER_PATHS.length][][];
    /** [type][op]: the copy-engine all-reduce's local reduction of a chunk */
    private final Kernel[][] copyEngineKernels;
    private final Kernel allGatherKernel;
    private final Kernel broadcastKernel;
    private final Kernel allToAllKernel;
    private final Kernel allToAllVKernel;
    private final CopyEngineCollectives copyEngine;

    private Collectives(Iris iris, Options options, KernelLibrary library, SymTensor workspace, int maxBlocks) {
        this.iris = iris;
        this.rank = iris.node().index();
        this.world = iris.node().size();
        this.options = options;
        this.stagingBytes = Partition.alignUp(options.stagingBytes(), 256);
        this.maxBlocks = maxBlocks;
        this.overlap = options.overlapLaunches();
        this.platform = Gpu.platform();
        this.library = library;
        this.workspace = workspace;
        this.args = new CclArgs(iris.deviceContext().bytes(), workspace.deviceAddress(), stagingBytes);
        KernelModule allReduce = library.module("ccl_all_reduce");
        for (int a = 0; a < ALGORITHMS.length; a++) {
            allReduceKernels[a] = reducingKernels(allReduce, "all_reduce_" + ALGORITHMS[a].kernelName());
        }
        this.copyEngineKernels = reducingKernels(allReduce, "all_reduce_" + AllReduceAlgorithm.COPY_ENGINE.kernelName());
        KernelModule reduceScatter = library.module("ccl_reduce_scatter");
        for (ReduceScatterPath path : REDUCE_SCATTER_PATHS) {
            reduceScatterKernels[path.ordinal()] = reducingKernels(reduceScatter, "reduce_scatter_" + path.kernelName());
        }
        this.allGatherKernel = library.module("ccl_all_gather").kernel(ALL_GATHER_KERNEL);
        this.broadcastKernel = library.module("ccl_broadcast").kernel(BROADCAST_KERNEL);
        KernelModule allToAll = library.module("ccl_all_to_all");
        this.allToAllKernel = allToAll.kernel(ALL_TO_ALL_KERNEL);
        this.allToAllVKernel = allToAll.kernel(ALL_TO_ALL_V_KERNEL);
        this.copyEngine = new CopyEngineCollectives(iris, workspace.deviceAddress() + HEADER_BYTES, stagingBytes);
    }

    /** The kernels of {@code ccl_<variant>_<type>_<op>} for every reducible type and op, as [type][op]. */
    private static Kernel[][] reducingKernels(KernelModule module, String variant) {
        Kernel[][] kernels = new Kernel[REDUCIBLE_ORDER.length][ReduceOp.values().length];
        for (int t = 0; t < REDUCIBLE_ORDER.length; t++) {
            for (ReduceOp op : ReduceOp.values()) {
                kernels[t][op.ordinal()] = module.kernel(reducingKernel(variant, t, op));
            }
        }
        return kernels;
    }

    private static String reducingKernel(String variant, int type, ReduceOp op) {
        return "ccl_" + variant + "_" + TYPE_SUFFIX[type] + "_" + op.kernelSuffix();
    }

    /** Every kernel an instance looks up, by module: what the fatbins must hold. */
    static Map<String, List<String>> kernelNames() {
        List<String> allReduce = new ArrayList<>();
        for (AllReduceAlgorithm a : ALGORITHMS) {
            allReduce.addAll(reducingKernelNames("all_reduce_" + a.kernelName()));
        }
        allReduce.addAll(reducingKernelNames("all_reduce_" + AllReduceAlgorithm.COPY_ENGINE.kernelName()));
        List<String> reduceScatter = new ArrayList<>();
        for (ReduceScatterPath path : REDUCE_SCATTER_PATHS) {
            reduceScatter.addAll(reducingKernelNames("reduce_scatter_" + path.kernelName()));
        }
        return Map.of("ccl_all_reduce", allReduce, "ccl_reduce_scatter", reduceScatter,
                "ccl_all_gather", List.of(ALL_GATHER_KERNEL), "ccl_broadcast", List.of(BROADCAST_KERNEL),
                "ccl_all_to_all", List.of(ALL_TO_ALL_KERNEL, ALL_TO_ALL_V_KERNEL));
    }

    private static List<String> reducingKernelNames(String variant) {
        List<String> names = new ArrayList<>();
        for (int t = 0; t < REDUCIBLE_ORDER.length; t++) {
            for (ReduceOp op : ReduceOp.values()) {
                names.add(reducingKernel(variant, t, op));
            }
        }
        return names;
    }

    /** {@link #create(Iris, Options)} with {@link Options#defaults()}. Collective. */
    public static Collectives create(Iris iris) {
        return create(iris, Options.defaults());
    }

    /**
     * Collective: loads the kernels, allocates and zeroes the workspace ({@link #workspaceBytes()}
     * of the symmetric heap), checks that every rank passed the same options and agrees on the
     * grid limit, and meets the other ranks (no peer signals into a workspace before it is zeroed).
     */
    public static Collectives create(Iris iris, Options options) {
        if (iris == null) throw new IllegalArgumentException("Collectives.create: iris must not be null");
        int rank = iris.rank();
        if (options == null) throw new IllegalArgumentException("rank " + rank + ": Collectives.create: options must not be null");
        NodeTeamOperations.requirePeers(iris, "Collectives");
        KernelLibrary library = KernelLibrary.forIris(iris);  // checked variants in checked mode
        SymTensor workspace = null;
        try {
            for (String module : kernelNames().keySet()) {
                library.module(module);  // a missing module fails here, before anything is allocated
            }
            long staging = Partition.alignUp(options.stagingBytes(), 256);
            workspace = iris.heap().zeros(DType.U8, workspaceBytes(staging));
            int sms = iris.deviceProperties().multiprocessorCount();
            ByteBuffer mine = ByteBuffer.allocate(37).putLong(options.stagingBytes()).putInt(options.maxBlocks())
                    .putLong(options.bytesPerBlock()).putInt(options.allToAllVBlocks()).put((byte) (options.overlapLaunches() ? 1 : 0))
                    .putLong(options.copyEngineBytes()).putInt(sms);
            byte[][] all = iris.allGather(mine.array());  // also the meeting: every workspace is zeroed now
            int minSms = Integer.MAX_VALUE;
            for (int r = 0; r < all.length; r++) {
                ByteBuffer theirs = ByteBuffer.wrap(all[r]);
                Options o = new Options(theirs.getLong(), theirs.getInt(), theirs.getLong(), theirs.getInt(), theirs.get() != 0,
                        theirs.getLong());
                minSms = Math.min(minSms, theirs.getInt());
                if (!o.equals(options)) {
                    throw new IllegalArgumentException("rank " + rank + ": Collectives.create: rank " + r + " passed " + o
                            + ", this rank " + options + "; every rank must pass the same options");
                }
            }
            int limit = Math.min(MAX_BLOCKS, minSms);
            int maxBlocks = options.maxBlocks() == 0 ? limit : Math.min(options.maxBlocks(), limit);
            return new Collectives(iris, options, library, workspace, maxBlocks);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, workspace, library);  // every rank gets here alike when the options disagree
            throw e;
        }
    }

    // ---- facts ---------------------------------------------------------------------------------

    public Options options() {
        return options;
    }

    /** Most blocks one launch uses. */
    public int maxBlocks() {
        return maxBlocks;
    }

    /** Bytes of the symmetric heap this instance holds on every rank. */
    public long workspaceBytes() {
        return workspaceBytes(stagingBytes);
    }

    /** Workspace bytes for staging buffers of {@code stagingBytes} (rounded up to 256) each. */
    public static long workspaceBytes(long stagingBytes) {
        return HEADER_BYTES + 2 * Partition.alignUp(stagingBytes, 256) + LL_AREA_BYTES;
    }

    /** The largest all-reduce input (bytes per rank) that ONE_SHOT takes with this instance's staging. */
    public long oneShotCapacityBytes() {
        return oneShotCapacityBytes(world, stagingBytes);
    }

    /** The largest input of ONE_SHOT: world slots of the input rounded up to 16 bytes fit the staging buffer. */
    public static long oneShotCapacityBytes(int world, long stagingBytes) {
        return stagingBytes / world / 16 * 16;
    }

    /** The staging ({@link Options#stagingBytes()}) that a ONE_SHOT all-reduce of {@code bytes} per rank needs on {@code world} ranks. */
    public static long oneShotStagingBytes(long bytes, int world) {
        return CclChecks.oneShotStagingBytes(bytes, world);
    }

    /** The algorithm {@code algorithm} stands for with an input of that many bytes (resolves AUTO). */
    public AllReduceAlgorithm resolve(AllReduceAlgorithm algorithm, long bytes) {
        return algorithm == AllReduceAlgorithm.AUTO ? resolveAuto(bytes, world, stagingBytes, options.copyEngineBytes()) : algorithm;
    }

    /**
     * What AUTO stands for with an input of {@code bytes} per rank on {@code world} ranks and these
     * {@link Options#stagingBytes()} and {@link Options#copyEngineBytes()}: {@link AllReduceAlgorithm#choose},
     * with ONE_SHOT's capacity and COPY_ENGINE's need for staging taken from the staging size.
     */
    public static AllReduceAlgorithm resolveAuto(long bytes, int world, long stagingBytes, long copyEngineBytes) {
        long staging = Partition.alignUp(stagingBytes, 256);
        long copyEngine = CopyEngineCollectives.fits(staging, world) ? copyEngineBytes : Options.NEVER;
        return AllReduceAlgorithm.choose(bytes, world, oneShotCapacityBytes(world, staging), copyEngine);
    }

    /** Whether all-gather and all-to-all with that many bytes per peer run on the copy engines. */
    boolean copyEngineMoves(long bytesPerPeer) {
        return world > 1 && bytesPerPeer >= options.copyEngineBytes();
    }

    // ---- all-reduce ------------------------------------------------------------------------------

    /** {@link #allReduce(SymTensor, SymTensor, ReduceOp, AllReduceAlgorithm, Stream)} with AUTO. */
    public void allReduce(SymTensor in, SymTensor out, ReduceOp op, Stream stream) {
        allReduce(in, out, op, AllReduceAlgorithm.AUTO, stream);
    }

    /**
     * {@code out} on every rank = the reduction over ranks of {@code in}, element by element.
     * {@code in} and {@code out}: BF16, F16 or F32, the same dtype and element count (shapes may
     * differ). {@code out} may be {@code in} where the algorithm allows it (all but ATOMIC).
     * ONE_SHOT takes inputs of up to {@link #oneShotCapacityBytes()}.
     */
    public synchronized void allReduce(SymTensor in, SymTensor out, ReduceOp op, AllReduceAlgorithm algorithm, Stream stream) {
        final String call = "allReduce";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        TensorChecks.notNull(rank, call, "algorithm", algorithm);
        CclChecks.reduction(rank, call, i, o, op, stream);
        CclChecks.numel(rank, call, o, i.numel(), "the element count of in");
        long bytes = i.byteSize();
        AllReduceAlgorithm alg = resolve(algorithm, bytes);
        if (i.overlaps(o) && !i.sameTensor(o)) {
            throw TensorChecks.fail(rank, call, "in " + i.describe() + " and out " + o.describe() + " overlap without being the same"
                    + " elements; pass one tensor twice for an in-place all-reduce");
        }
        if (i.sameTensor(o) && !alg.allowsInPlace()) {
            throw TensorChecks.fail(rank, call, "in and out are the same tensor " + i.describe() + "; " + alg
                    + " is out-of-place only (use ONE_SHOT, TWO_SHOT or RING in place)");
        }
        if (alg == AllReduceAlgorithm.ONE_SHOT && CclChecks.oneShotStagingBytes(bytes, world) > stagingBytes) {
            throw TensorChecks.fail(rank, call, "ONE_SHOT needs " + CclChecks.oneShotStagingBytes(bytes, world) + " bytes of staging for "
                    + bytes + " bytes on " + world + " ranks; this Collectives has " + stagingBytes + " (inputs of up to "
                    + oneShotCapacityBytes() + " bytes); use TWO_SHOT or Options.withStagingBytes");
        }
        if (alg == AllReduceAlgorithm.COPY_ENGINE) {
            if (!CopyEngineCollectives.fits(stagingBytes, world)) {
                throw TensorChecks.fail(rank, call, "COPY_ENGINE needs staging buffers of at least " + 16L * world + " bytes on "
                        + world + " ranks; this Collectives has " + stagingBytes + "; use TWO_SHOT or Options.withStagingBytes");
            }
            copyEngine.allReduce(copyEngineKernels[typeIndex(i.dtype())][op.ordinal()], in.deviceAddress(), out.deviceAddress(),
                    i.numel(), i.dtype().byteSize(), stream, args, this::shape);
            return;
        }
        long work = switch (alg) {
            case TWO_SHOT, RING -> Partition.ceilDiv(bytes, world);
            default -> bytes;
        };
        Kernel k = allReduceKernels[alg.ordinal() - 1][typeIndex(i.dtype())][op.ordinal()];
        k.launch(inlineFlags(alg, bytes, world) ? inlineFlagShape(bytes, false) : shape(work), stream,
                args.call(in.deviceAddress(), out.deviceAddress(), i.numel()), overlap);
    }

    // ---- reduce-scatter --------------------------------------------------------------------------

    /**
     * {@code out} on rank r = the reduction over ranks of elements [r m, (r+1) m) of {@code in},
     * where m is {@code out}'s element count and {@code in} has world m elements. BF16, F16 or F32;
     * distinct tensors of one dtype. Rounded once, in rank order, like ONE_SHOT / TWO_SHOT all-reduce,
     * whichever way the size sends the data ({@link ReduceScatterPath}).
     */
    public synchronized void reduceScatter(SymTensor in, SymTensor out, ReduceOp op, Stream stream) {
        final String call = "reduceScatter";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.reduceScatter(rank, call, i, o, op, stream, world, "reduceScatter is out-of-place");
        long shard = o.byteSize();
        ReduceScatterPath path = reduceScatterPath(shard);
        reduceScatterKernels[path.ordinal()][typeIndex(i.dtype())][op.ordinal()].launch(
                path == ReduceScatterPath.LL ? inlineFlagShape(shard, true) : shape(shard), stream,
                args.call(in.deviceAddress(), out.deviceAddress(), o.numel()), overlap);
    }

    /** How a reduce-scatter with a shard (output) of that many bytes per rank moves its data. */
    ReduceScatterPath reduceScatterPath(long shardBytes) {
        return ReduceScatterPath.choose(shardBytes, world, stagingBytes);
    }

    // ---- all-gather ------------------------------------------------------------------------------

    /**
     * {@code out} on every rank = the ranks' {@code in} one after another: elements [r n, (r+1) n)
     * are rank r's, n being {@code in}'s element count. Any dtype; tensors of one dtype, either
     * apart or in place: {@code in} is then this rank's block of {@code out}, which already holds
     * this rank's elements.
     *
     * <pre>{@code
     * SymTensor gathered = heap.empty(DType.BF16, world * rows, hidden);
     * SymTensor mine = gathered.chunk(rank, world);          // filled by this rank
     * ccl.allGather(mine, gathered, stream);                 // in place: the peers' blocks arrive
     * }</pre>
     */
    public synchronized void allGather(SymTensor in, SymTensor out, Stream stream) {
        final String call = "allGather";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        boolean inPlace = CclChecks.allGatherMaybeInPlace(rank, call, i, o, stream, world);
        if (copyEngineMoves(i.byteSize())) {
            copyEngine.allGather(in.deviceAddress(), out.deviceAddress(), i.byteSize(), inPlace, stream);
            return;
        }
        allGatherKernel.launch(shape(i.byteSize()), stream,
                args.call(in.deviceAddress(), out.deviceAddress(), i.byteSize()), overlap);
    }

    // ---- broadcast -------------------------------------------------------------------------------

    /** {@code tensor} on every rank = rank {@code root}'s {@code tensor}. Any dtype; in place. */
    public synchronized void broadcast(SymTensor tensor, int root, Stream stream) {
        final String call = "broadcast";
        ensureOpen(call);
        Operand t = operand(call, "tensor", tensor);
        TensorChecks.notNull(rank, call, "stream", stream);
        CclChecks.root(rank, call, root, world);
        broadcastKernel.launch(shape(t.byteSize()), stream,
                args.broadcast(tensor.deviceAddress(), t.byteSize(), root), overlap);
    }

    // ---- all-to-all ------------------------------------------------------------------------------

    /**
     * Block p of {@code in} (elements [p m, (p+1) m), m = element count / world) goes to rank p,
     * where it lands in block r of {@code out} (r: this rank). Any dtype; distinct tensors of one
     * dtype and element count, divisible by the world size.
     */
    public synchronized void allToAll(SymTensor in, SymTensor out, Stream stream) {
        final String call = "allToAll";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        TensorChecks.notNull(rank, call, "stream", stream);
        CclChecks.sameDType(rank, call, i, o);
        CclChecks.divisible(rank, call, i, world);
        CclChecks.numel(rank, call, o, i.numel(), "the element count of in");
        CclChecks.distinct(rank, call, i, o, "allToAll is out-of-place");
        long block = i.byteSize() / world;
        if (copyEngineMoves(block)) {
            copyEngine.allToAll(in.deviceAddress(), out.deviceAddress(), block, stream);
            return;
        }
        allToAllKernel.launch(shape(block), stream,
                args.call(in.deviceAddress(), out.deviceAddress(), block), overlap);
    }

    /**
     * All-to-all with per-peer counts (MoE token exchange). This rank sends {@code sendCounts[p]}
     * elements to rank p, taken from {@code in} one peer after another (peer p's at the sum of
     * {@code sendCounts[0..p)}), and receives {@code recvCounts[q]} elements from rank q, stored in
     * {@code out} one peer after another (at the sum of {@code recvCounts[0..q)}); elements of
     * {@code out} beyond the sum of {@code recvCounts} are left alone. Counts are in elements, one
     * per rank, non-negative, and must fit the tensors; {@code sendCounts[q]} here must equal
     * {@code recvCounts[this rank]} on rank q: a disagreement is found on the device, recorded as
     * device error 3 at site 7908 (raised by the next {@link Iris#synchronize}), and the smaller
     * count is moved. Any dtype; distinct tensors of one dtype.
     *
     * <p>The counts are kernel arguments: a captured graph replays the counts it was captured with.
     */
    public synchronized void allToAllV(SymTensor in, long[] sendCounts, SymTensor out, long[] recvCounts, Stream stream) {
        final String call = "allToAllV";
        ensureOpen(call);
        Operand i = operand(call, "in", in);
        Operand o = operand(call, "out", out);
        CclChecks.allToAllV(rank, call, i, o, stream, "allToAllV is out-of-place");
        long[] sendDispls = CclChecks.counts(rank, call, "sendCounts", sendCounts, world, i);
        long[] recvDispls = CclChecks.counts(rank, call, "recvCounts", recvCounts, world, o);
        launchAllToAllV(in, sendCounts, sendDispls, out, recvCounts, recvDispls, stream);
    }

    /**
     * All-to-all-v with the displacements given (elements, each rank's its own), already checked
     * against the tensors: the node part of {@link WorldCollectives}'s all-to-all, whose node block
     * starts inside the tensors.
     */
    synchronized void launchAllToAllV(SymTensor in, long[] sendCounts, long[] sendDispls, SymTensor out, long[] recvCounts,
                                      long[] recvDispls, Stream stream) {
        ensureOpen("allToAllV");
        int blocks = Math.min(options.allToAllVBlocks(), maxBlocks);
        allToAllVKernel.launch(LaunchShape.of(blocks, THREADS), stream,
                args.allToAllV(in.deviceAddress(), out.deviceAddress(), sendCounts, sendDispls, recvCounts, recvDispls,
                        in.dtype().byteSize()), overlap);
    }

    // ---- helpers ---------------------------------------------------------------------------------

    /**
     * One-shot all-reduce inputs and reduce-scatter shards of up to this many bytes (whole 32-bit
     * words) travel with the flag inline on {@code world} ranks: 256 KiB on 2 ranks, 64 KiB on 8
     * (ccl::ll_max_bytes). Fewer ranks get more because each sends fewer doubled copies.
     */
    /**
     * Sets the call counter the kernels keep in the workspace (ccl::layout::kEpoch, 8 bytes at its
     * start); the next call runs with {@code epoch + 1}. For tests that must reach epochs no test
     * could count up to. Every rank sets the same value with no call in flight.
     */
    void setEpochForTest(long epoch, Stream stream) {
        try (LongPointer value = new LongPointer(1)) {
            value.put(epoch);
            Memcpy.hostToDevice(workspace.deviceAddress(), value, 8, stream);
            stream.synchronize();
        }
    }

    public static long llMaxBytes(int world) {
        return LL_AREA_BYTES / (4L * world);
    }

    /** Whether the one-shot kernel takes its inline-flag path (ccl_all_reduce.cu: whole words, small). */
    static boolean inlineFlags(AllReduceAlgorithm alg, long bytes, int world) {
        return alg == AllReduceAlgorithm.ONE_SHOT && bytes % 4 == 0 && bytes <= llMaxBytes(world);
    }

    /**
     * 32-bit payload words per inline-flag packet (ccl::ll_reduce): all-reduce's packets carry 3 on
     * CUDA (16 bytes with the tag), reduce-scatter's 1 (8 bytes), HIP's always 1. (Before Hopper the
     * kernels send 8-byte packets; the launch then has a third of the threads it could use, which
     * the kernel's grid-stride loop absorbs.)
     */
    static int llWordsPerPacket(boolean reduceScatter, Platform platform) {
        return !reduceScatter && platform == Platform.CUDA ? 3 : 1;
    }

    /** A thread per packet: every packet waits for its peers' copies, so parallel waits hide each other. */
    private LaunchShape inlineFlagShape(long bytes, boolean reduceScatter) {
        long packets = Partition.ceilDiv(bytes / 4, llWordsPerPacket(reduceScatter, platform));
        return LaunchShape.of((int) Math.min(maxBlocks, Math.max(1, Partition.ceilDiv(packets, THREADS))), THREADS);
    }

    private LaunchShape shape(long workBytes) {
        return LaunchShape.of(Partition.blocks(workBytes, options.bytesPerBlock(), maxBlocks), THREADS);
    }

    private Operand operand(String call, String name, SymTensor t) {
        TensorChecks.notNull(rank, call, name, t);
        Operand o = new Operand(name, t.dtype(), t.numel(), t.isLive(), t.heap() == iris.heap(), t.heapOffset(), t);
        CclChecks.usable(rank, call, o);
        return o;
    }

    private static int typeIndex(DType t) {
        return switch (t) {
            case BF16 -> 0;
            case F16 -> 1;
            case F32 -> 2;
            default -> throw new IllegalStateException("not a reducible dtype: " + t);  // checked before
        };
    }

    private void ensureOpen(String call) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + call + " called after Collectives.close()");
        }
    }

    /**
     * Collective: frees the workspace (after this rank's default stream is idle; synchronize the
     * streams the collectives ran on first) and unloads the kernels. Safe to call twice. Close it
     * before its Iris instance.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(copyEngine, workspace, library, args);
    }

    @Override
    public String toString() {
        return "Collectives(rank " + rank + "/" + world + ", " + maxBlocks + " blocks max, staging 2 x " + stagingBytes
                + " bytes" + (closed.get() ? ", closed" : "") + ")";
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.TensorMapCache;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import org.bytedeco.javacpp.BytePointer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Attention forward on one GPU (FlashAttention-style: an online softmax, nothing of size S x S in
 * memory), enqueued on a stream, on either of two mainloops ({@link GemmMainloop}, chosen as the
 * GEMM's is): on Hopper, TMA loads and wgmma ({@code attention.cu}); on every NVIDIA GPU since
 * Ampere, mma.sync fed by cp.async ({@code attention_portable.cu}). Both compute the same contract
 * and carry the same ring state. Usable on its own, with or without a symmetric heap; {@link
 * RingAttention} runs its ring-step kernel once per K/V shard.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); Attention attention = Attention.create()) {
 *     SymmetricHeap heap = iris.heap();
 *     SymTensor q = heap.randn(DType.BF16, 1, 32, 4096, 128);   // [batch, qHeads, qLen, headDim]
 *     SymTensor k = heap.randn(DType.BF16, 1, 8, 4096, 128);    // [batch, kvHeads, kvLen, headDim]
 *     SymTensor v = heap.randn(DType.BF16, 1, 8, 4096, 128);
 *     SymTensor o = heap.empty(DType.BF16, 1, 32, 4096, 128);
 *     SymTensor lse = heap.empty(DType.F32, 1, 32, 4096);       // or null
 *     attention.forward(q, k, v, o, lse, true, iris.stream());   // causal, scale 1 / sqrt(128)
 *     iris.synchronize();
 *
 *     // Plain device memory (no Iris needed): the same through addresses and a problem.
 *     AttentionProblem p = AttentionProblem.of(DType.BF16, 1, 32, 8, 4096, 4096, 128, false);
 *     attention.forward(p, qAddress, kAddress, vAddress, oAddress, 0, stream);
 * }
 *
 * // The portable kernels on any GPU since Ampere, Hopper included (e.g. to compare the two):
 * try (Attention portable = Attention.create(GemmMainloop.PORTABLE)) {
 *     portable.mainloop();                                        // PORTABLE
 *     portable.forward(q, k, v, o, lse, true, iris.stream());
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>{@code O[b,h,i] = sum_j softmax_j(scale Q[b,h,i] . K[b,h/G,j]) V[b,h/G,j]}, G = qHeads /
 *     kvHeads, with {@code j <= i} when causal (top-left aligned); {@code lse[b,h,i]} = the natural
 *     log of the softmax denominator, {@code log sum_j exp(scale Q.K)}. Scores, the running max and
 *     sum and O are F32; the probabilities are rounded to the input type before the P V product (as
 *     FlashAttention does); O is rounded once.</li>
 * <li>Shapes and dtypes as {@link AttentionProblem} checks them: BF16 or F16, headDim 64 or 128,
 *     lengths multiples of 128, qHeads a multiple of kvHeads, causal with qLen == kvLen. Tensors are
 *     contiguous row-major; pointers 16-byte aligned; outputs must not overlap inputs.</li>
 * <li>NVIDIA only. {@link GemmMainloop#HOPPER}: compute capability 9.0 and {@value #MAX_SHARED_BYTES}
 *     bytes of shared memory per block; {@link GemmMainloop#PORTABLE}: compute capability 8.0 or later
 *     and {@value #PORTABLE_MAX_SHARED_BYTES} bytes (A100, A10, L4, L40S, RTX 30xx to 50xx, H100,
 *     B200). {@link GemmMainloop#AUTO} takes Hopper's where it runs ({@value GemmMainloop#VARIABLE}
 *     may say otherwise); elsewhere {@link #create} throws {@link IrisPlatformException}.</li>
 * <li>Every call only enqueues work: no host synchronization, no allocation on the device. Tensor
 *     maps are encoded on the host the first time an (address, shape) is seen and cached, so calls
 *     may be captured into a CUDA graph and replayed.</li>
 * <li>Arguments are checked before anything is launched ({@link IllegalArgumentException} naming
 *     the rank, the argument and what was expected); calls on one instance are serialized.</li>
 * </ul>
 *
 * <p>Launch: grid (qLen / 128, qHeads, batch). Hopper: {@value #THREADS} threads (a TMA producer
 * warpgroup and two consumer warpgroups of 64 query rows each) and 164864 bytes of dynamic shared
 * memory for headDim 128, 82944 for 64; but the forward at headDim 64 covers {@value #WIDE_ROWS}
 * rows a block with three consumer warpgroups ({@link AttentionProblem#forwardLaunchShape}).
 * Portable: {@value #PORTABLE_THREADS} threads (eight warps of 16 query rows) and 98304 or 49152
 * bytes ({@link AttentionProblem#sharedBytes(GemmMainloop)}). The
 * portable mainloop has no kernel for a ring's last two steps in one launch: {@link #ringLastSteps}
 * and {@link #ring} are Hopper's, and {@link RingAttention} launches those steps one by one there.
 * Every kernel takes one argument struct, {@code iris_attention_args} (iris/abi/attention.h, where
 * these constants come from), filled per call by {@link AttentionArgs}.
 */
public final class Attention implements AutoCloseable {
    /** The kernel module ({@code attention.cu}). */
    public static final String MODULE = "attention";
    /** What the kernels need, as attention.cu's IRIS_NVIDIA_ONLY says it. */
    public static final String REQUIREMENT = "sm_90a (wgmma, TMA)";
    /** The portable kernel module ({@code attention_portable.cu}). */
    public static final String PORTABLE_MODULE = "attention_portable";
    /** What the portable kernels need. */
    public static final String PORTABLE_REQUIREMENT = "compute capability 8.0 or later (mma.sync, ldmatrix, cp.async)";
    /** Threads per block of the portable kernels: eight warps of 16 query rows. */
    public static final int PORTABLE_THREADS = KernelAbi.IRIS_ATTENTION_PORTABLE_THREADS;
    /** Shared memory per block of the portable headDim-128 kernels, the largest. */
    public static final int PORTABLE_MAX_SHARED_BYTES = KernelAbi.IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D128;
    /** Threads per block: one producer and two consumer warpgroups. */
    public static final int THREADS = KernelAbi.IRIS_ATTENTION_THREADS;
    /** Shared memory per block of the headDim-128 kernels, the largest. */
    public static final int MAX_SHARED_BYTES = KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D128;
    /** Query rows a block of the Hopper forward at headDim 64: three consumer warpgroups of 64. */
    public static final int WIDE_ROWS = KernelAbi.IRIS_ATTENTION_WIDE_ROWS;
    /** Threads per block of the Hopper forward at headDim 64: one producer, three consumers. */
    public static final int WIDE_THREADS = KernelAbi.IRIS_ATTENTION_WIDE_THREADS;
    /** Shared memory per block of the Hopper forward at headDim 64. */
    public static final int WIDE_SHARED_BYTES = KernelAbi.IRIS_ATTENTION_WIDE_SHARED_BYTES_D64;
    /** Box of every tensor map: 64 elements (128 bytes) x 128 rows. */
    static final int BOX_INNER = KernelAbi.IRIS_ATTENTION_BOX_INNER;
    static final int BOX_OUTER = AttentionChecks.TILE;
    /** Shared-memory swizzle of every tensor map, in bytes. */
    public static final int SWIZZLE_BYTES = KernelAbi.IRIS_ATTENTION_SWIZZLE_BYTES;
    /** Tensor maps kept per instance (least recently used ones are dropped). */
    static final int MAP_CACHE_ENTRIES = 512;

    private static final DType[] TYPES = {DType.BF16, DType.F16};
    private static final int[] HEAD_DIMS = {64, 128};

    private final DeviceProperties device;
    /** What runs: HOPPER or PORTABLE, never AUTO. */
    private final GemmMainloop mainloop;
    private final KernelLibrary library;
    private final Map<String, Kernel> forwardKernels = new HashMap<>();
    private final Map<String, Kernel> stepKernels = new HashMap<>();
    private final Map<String, Kernel> lastStepsKernels = new HashMap<>();
    /** Why the ring-step kernels could not be loaded (null when they were). */
    private final String stepUnavailable;
    private final AttentionArgs args = new AttentionArgs();
    /** The context last copied into {@link #args}: a ring passes the same one every time. */
    private DeviceContext argsContext;
    private final TensorMapCache maps = new TensorMapCache(MAP_CACHE_ENTRIES, SWIZZLE_BYTES);
    private final AtomicBoolean closed = new AtomicBoolean();

    private Attention(DeviceProperties device, KernelLibrary library, GemmMainloop mainloop) {
        this.device = device;
        this.mainloop = mainloop;
        this.library = library;
        boolean hopper = mainloop == GemmMainloop.HOPPER;
        KernelModule module = library.module(hopper ? MODULE : PORTABLE_MODULE);
        String missing = null;
        for (DType t : TYPES) {
            for (int d : HEAD_DIMS) {
                for (boolean causal : new boolean[] {false, true}) {
                    String name = AttentionProblem.kernelName(AttentionProblem.FORWARD, mainloop, t, d, causal);
                    Kernel k = module.kernel(name);
                    k.setMaxDynamicSharedBytes(AttentionProblem.forwardSharedBytes(mainloop, d));
                    forwardKernels.put(name, k);
                    String step = AttentionProblem.kernelName(AttentionProblem.RING_STEP, mainloop, t, d, causal);
                    if (missing == null) {
                        missing = loadInto(module, step, d, stepKernels);
                    }
                    if (missing == null && hopper) {
                        missing = loadInto(module, AttentionProblem.kernelName("iris_ring_attention_last_steps_", t, d, causal), d,
                                lastStepsKernels);
                    }
                }
            }
        }
        this.stepUnavailable = missing;
    }

    /** Loads kernel {@code name} into {@code into}; returns why it could not, or null. */
    private String loadInto(KernelModule module, String name, int headDim, Map<String, Kernel> into) {
        try {
            Kernel k = module.kernel(name);
            k.setMaxDynamicSharedBytes(AttentionProblem.sharedBytes(mainloop, headDim));
            into.put(name, k);
            return null;
        } catch (IrisException e) {
            return name + ": " + e.getMessage();
        }
    }

    /** {@link #create(GemmMainloop)} of {@link GemmMainloop#AUTO}: Hopper's kernels where they run. */
    public static Attention create() {
        return create(GemmMainloop.AUTO);
    }

    /**
     * Loads the kernels of the mainloop that {@code mainloop} resolves to ({@link
     * GemmMainloop#resolve}: itself, else {@value GemmMainloop#VARIABLE}, else the GPU) into the
     * calling thread's current device ({@code Iris.init} makes the rank's GPU current). Throws
     * {@link IrisPlatformException} on HIP, or where the GPU cannot run that mainloop (Hopper's needs
     * compute capability 9.0, the portable one 8.0 or later).
     *
     * <pre>{@code
     * Attention a = Attention.create(GemmMainloop.PORTABLE);   // the mma.sync kernels, on Hopper too
     * }</pre>
     */
    public static Attention create(GemmMainloop mainloop) {
        AttentionChecks.notNull("attention", "mainloop", mainloop);
        Platform.require(Platform.CUDA, MODULE, REQUIREMENT + " or " + PORTABLE_REQUIREMENT);
        DeviceProperties device = Gpu.properties(Gpu.currentDevice());
        GemmMainloop runs = mainloop.resolve(device);
        AttentionChecks.device(Platform.current(), device, runs);
        KernelLibrary library = KernelLibrary.forClasspath();
        try {
            return new Attention(device, library, runs);
        } catch (RuntimeException | Error e) {
            library.close();
            throw e;
        }
    }

    /** The GPU the kernels were loaded for. */
    public DeviceProperties device() {
        return device;
    }

    /** The mainloop whose kernels run: {@link GemmMainloop#HOPPER} or {@link GemmMainloop#PORTABLE}, never AUTO. */
    public GemmMainloop mainloop() {
        return mainloop;
    }

    /** Tensor maps cached now. */
    public synchronized int cachedTensorMaps() {
        return maps.size();
    }

    /**
     * Whether this build's module has the ring-step kernels ({@link #ringStep}, and on Hopper {@link
     * #ringLastSteps}).
     */
    public boolean hasRingStep() {
        return stepUnavailable == null;
    }

    // ---- symmetric tensors -------------------------------------------------------------------------

    /** {@link #forward(SymTensor, SymTensor, SymTensor, SymTensor, SymTensor, boolean, double, Stream)} with scale 1 / sqrt(headDim). */
    public void forward(SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse, boolean causal, Stream stream) {
        long[] shape = q == null ? null : q.shape();
        double scale = shape != null && shape.length == 4 ? AttentionProblem.defaultScale((int) shape[3]) : 1;
        forward(q, k, v, o, lse, causal, scale, stream);
    }

    /**
     * Attention on this rank's copies of symmetric tensors: {@code q} [B, Hq, Sq, D], {@code k} and
     * {@code v} [B, Hkv, Skv, D], {@code o} like q, {@code lse} [B, Hq, Sq] F32 or null.
     */
    public void forward(SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse, boolean causal, double scale,
                        Stream stream) {
        AttentionProblem p = AttentionChecks.tensors(operand("q", q), operand("k", k), operand("v", v), operand("o", o),
                operand("lse", lse), causal, scale);
        forward(p, q.deviceAddress(), k.deviceAddress(), v.deviceAddress(), o.deviceAddress(),
                lse == null ? 0 : lse.deviceAddress(), stream);
    }

    static AttentionChecks.Operand operand(String name, SymTensor t) {
        return t == null ? null : new AttentionChecks.Operand(name, t.dtype(), t.shape(), t.isLive(), t.toString());
    }

    // ---- device addresses --------------------------------------------------------------------------

    /**
     * Attention on device addresses laid out as {@code p} says (contiguous); {@code lse} may be 0.
     * The addresses may be any device memory of this process (a {@code DeviceMemory}, a symmetric
     * tensor, a peer's mapped heap).
     */
    public synchronized void forward(AttentionProblem p, long q, long k, long v, long o, long lse, Stream stream) {
        ensureOpen();
        AttentionChecks.notNull("attention", "problem", p);
        AttentionChecks.notNull("attention", "stream", stream);
        AttentionChecks.buffers(p, q, k, v, o, lse);
        Kernel kernel = forwardKernels.get(p.kernelName(mainloop));
        putInputs(p, q, k, v);
        kernel.launch(p.forwardLaunchShape(mainloop), stream, args.forward(p, o, lse), false);
    }

    /** Enqueues one ring-attention step (see {@link RingStep}). */
    public synchronized void ringStep(RingStep step, Stream stream) {
        String op = "ring attention step";
        requireRingKernels(op);
        AttentionChecks.notNull(op, "step", step);
        AttentionChecks.notNull(op, "stream", stream);
        AttentionProblem p = step.problem();
        putInputs(p, step.q(), step.k(), step.v());
        stepKernels.get(p.ringStepKernelName(mainloop)).launch(p.launchShape(mainloop), stream, args.step(step), false);
    }

    /**
     * Enqueues the last two steps of a ring as one launch (see {@link RingLastSteps}); {@code ctx}
     * (the rank's {@code iris.deviceContext()}) bounds the wait for the second shard. Hopper's
     * mainloop only: on the portable one, launch the two steps with {@link #ringStep}, the second
     * after its shard in stream order (as {@link RingAttention} does).
     */
    public synchronized void ringLastSteps(DeviceContext ctx, RingLastSteps steps, Stream stream) {
        String op = "ring attention last steps";
        requireRingKernels(op);
        requireHopper(op);
        AttentionChecks.notNull(op, "ctx", ctx);
        AttentionChecks.notNull(op, "steps", steps);
        AttentionChecks.notNull(op, "stream", stream);
        RingStep first = steps.first();
        AttentionProblem p = first.problem();
        putInputs(p, first.q(), first.k(), first.v());
        putMap(args.k2Map(), p, steps.k(), p.kvRows());
        putMap(args.v2Map(), p, steps.v(), p.kvRows());
        if (ctx != argsContext) {
            args.context(ctx.bytes());
            argsContext = ctx;
        }
        lastStepsKernels.get(p.ringLastStepsKernelName()).launch(p.launchShape(), stream, args.lastSteps(steps), false);
    }

    /**
     * Enqueues a whole ring on K/V already in place, as {@link RingAttention} launches it: each
     * step but the last two alone ({@link #ringStep}), the last two as one launch ({@link
     * #ringLastSteps}, {@link RingLastSteps#of}) that reads the last step's K/V once {@code
     * lastReady} is 1 (set before, or by a stream write behind the work that fills that K/V). A
     * ring of one step is that step alone. Every launch is built before any is enqueued. A ring of
     * more steps needs Hopper's mainloop ({@link #ringLastSteps}); on the portable one, launch every
     * step with {@link #ringStep}.
     */
    public synchronized void ring(DeviceContext ctx, RingStep[] steps, long lastReady, Stream stream) {
        String op = "ring attention";
        AttentionChecks.notNull(op, "steps", steps);
        if (steps.length == 0) {
            throw AttentionChecks.fail(op, "steps is empty; a ring has at least one step");
        }
        if (steps.length > 1) {
            requireHopper(op);
        }
        if (steps.length == 1) {
            ringStep(steps[0], stream);
            return;
        }
        int last = steps.length - 2;
        RingLastSteps tail = RingLastSteps.of(steps[last], steps[last + 1], lastReady);
        for (int s = 0; s < last; s++) {
            AttentionChecks.notNull(op, "steps[" + s + "]", steps[s]);
        }
        for (int s = 0; s < last; s++) {
            ringStep(steps[s], stream);
        }
        ringLastSteps(ctx, tail, stream);
    }

    private void requireRingKernels(String op) {
        ensureOpen();
        if (stepUnavailable != null) {
            throw new IrisException(AttentionChecks.who(op) + ": the attention module has no ring-step kernel (" + stepUnavailable
                    + ")");
        }
    }

    /**
     * Where the last steps' single launch is asked of the portable mainloop, which has none: an
     * {@link IllegalStateException} saying what to do instead.
     */
    private void requireHopper(String op) {
        if (mainloop != GemmMainloop.HOPPER) {
            throw new IllegalStateException(AttentionChecks.who(op) + ": the last two steps in one launch are the Hopper mainloop's;"
                    + " this Attention runs the " + mainloop + " one: launch each step with ringStep, the last after its K/V"
                    + " in stream order (RingAttention does)");
        }
    }

    /**
     * Q and the (first) K/V shard: their addresses, which the portable kernels read, and on Hopper
     * their tensor maps.
     */
    private void putInputs(AttentionProblem p, long q, long k, long v) {
        args.inputs(q, k, v);
        if (mainloop == GemmMainloop.HOPPER) {
            putMap(args.qMap(), p, q, p.qRows());
            putMap(args.kMap(), p, k, p.kvRows());
            putMap(args.vMap(), p, v, p.kvRows());
        }
    }

    private void putMap(BytePointer member, AttentionProblem p, long address, long rows) {
        tensorMap(p.dtype(), address, rows, p.headDim()).copyTo(member);
    }

    /**
     * The tensor map the kernels read a [rows, headDim] 16-bit matrix at {@code address} through:
     * boxes of 64 elements x 128 rows, 128-byte swizzle. Cached per (dtype, address, rows, headDim).
     */
    synchronized TensorMap tensorMap(DType dtype, long address, long rows, int headDim) {
        ensureOpen();
        return maps.tiled2d(dtype, address, headDim, rows, headDim * 2L, BOX_INNER, BOX_OUTER);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(AttentionChecks.who("attention") + ": Attention used after close()");
        }
    }

    /** Unloads the kernels (synchronize the streams they ran on first). Safe to call twice. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Resources.closeAll(library, this::releaseArguments);
    }

    private synchronized void releaseArguments() {
        maps.clear();
        args.close();
    }

    @Override
    public String toString() {
        return "Attention(GPU " + device.device() + " " + device.name() + ", " + device.multiprocessorCount() + " SMs, " + mainloop
                + (stepUnavailable != null ? ", no ring step" : "") + (closed.get() ? ", closed" : "") + ")";
    }
}

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
import dev.irisjvm.runtime.abi.global.KernelAbi;
import org.bytedeco.javacpp.BytePointer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Attention forward on one GPU (FlashAttention-style, for Hopper: TMA loads, wgmma, an online
 * softmax, nothing of size S x S in memory; {@code attention.cu}), enqueued on a stream. Usable on
 * its own, with or without a symmetric heap; {@link RingAttention} runs its ring-step kernel once
 * per K/V shard.
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
 * <li>NVIDIA Hopper only (compute capability 9.0 and {@value #MAX_SHARED_BYTES} bytes of shared memory
 *     per block); elsewhere {@link #create} throws {@link IrisPlatformException}.</li>
 * <li>Every call only enqueues work: no host synchronization, no allocation on the device. Tensor
 *     maps are encoded on the host the first time an (address, shape) is seen and cached, so calls
 *     may be captured into a CUDA graph and replayed.</li>
 * <li>Arguments are checked before anything is launched ({@link IllegalArgumentException} naming
 *     the rank, the argument and what was expected); calls on one instance are serialized.</li>
 * </ul>
 *
 * <p>Launch: grid (qLen / 128, qHeads, batch) of {@value #THREADS} threads (a TMA producer
 * warpgroup and two consumer warpgroups of 64 query rows each), {@link AttentionProblem#sharedBytes()}
 * of dynamic shared memory (164864 bytes for headDim 128, 82944 for 64). Every kernel takes one
 * argument struct, {@code iris_attention_args} (iris/abi/attention.h, where these constants come
 * from), filled per call by {@link AttentionArgs}.
 */
public final class Attention implements AutoCloseable {
    /** The kernel module ({@code attention.cu}). */
    public static final String MODULE = "attention";
    /** What the kernels need, as attention.cu's IRIS_NVIDIA_ONLY says it. */
    public static final String REQUIREMENT = "sm_90a (wgmma, TMA)";
    /** Threads per block: one producer and two consumer warpgroups. */
    public static final int THREADS = KernelAbi.IRIS_ATTENTION_THREADS;
    /** Shared memory per block of the headDim-128 kernels, the largest. */
    public static final int MAX_SHARED_BYTES = KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D128;
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

    private Attention(DeviceProperties device, KernelLibrary library) {
        this.device = device;
        this.library = library;
        KernelModule module = library.module(MODULE);
        String missing = null;
        for (DType t : TYPES) {
            for (int d : HEAD_DIMS) {
                for (boolean causal : new boolean[] {false, true}) {
                    String name = AttentionProblem.kernelName("iris_attention_fwd_", t, d, causal);
                    Kernel k = module.kernel(name);
                    k.setMaxDynamicSharedBytes(AttentionProblem.sharedBytes(d));
                    forwardKernels.put(name, k);
                    String step = AttentionProblem.kernelName("iris_ring_attention_step_", t, d, causal);
                    String last = AttentionProblem.kernelName("iris_ring_attention_last_steps_", t, d, causal);
                    if (missing == null) {
                        missing = loadInto(module, step, d, stepKernels);
                    }
                    if (missing == null) {
                        missing = loadInto(module, last, d, lastStepsKernels);
                    }
                }
            }
        }
        this.stepUnavailable = missing;
    }

    /** Loads kernel {@code name} into {@code into}; returns why it could not, or null. */
    private static String loadInto(KernelModule module, String name, int headDim, Map<String, Kernel> into) {
        try {
            Kernel k = module.kernel(name);
            k.setMaxDynamicSharedBytes(AttentionProblem.sharedBytes(headDim));
            into.put(name, k);
            return null;
        } catch (IrisException e) {
            return name + ": " + e.getMessage();
        }
    }

    /**
     * Loads the kernels into the calling thread's current device ({@code Iris.init} makes the rank's
     * GPU current). Throws {@link IrisPlatformException} on HIP or on a GPU other than compute
     * capability 9.0.
     */
    public static Attention create() {
        Platform.require(Platform.CUDA, MODULE, REQUIREMENT);
        DeviceProperties device = Gpu.properties(Gpu.currentDevice());
        AttentionChecks.device(Platform.current(), device, MODULE, REQUIREMENT, MAX_SHARED_BYTES);
        KernelLibrary library = KernelLibrary.forClasspath();
        try {
            return new Attention(device, library);
        } catch (RuntimeException | Error e) {
            library.close();
            throw e;
        }
    }

    /** The GPU the kernels were loaded for. */
    public DeviceProperties device() {
        return device;
    }

    /** Tensor maps cached now. */
    public synchronized int cachedTensorMaps() {
        return maps.size();
    }

    /** Whether this build's module has the ring-step kernels ({@link #ringStep}, {@link #ringLastSteps}). */
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
        Kernel kernel = forwardKernels.get(p.kernelName());
        putMaps(p, q, k, v);
        kernel.launch(p.launchShape(), stream, args.forward(p, o, lse), false);
    }

    /** Enqueues one ring-attention step (see {@link RingStep}). */
    public synchronized void ringStep(RingStep step, Stream stream) {
        String op = "ring attention step";
        requireRingKernels(op);
        AttentionChecks.notNull(op, "step", step);
        AttentionChecks.notNull(op, "stream", stream);
        AttentionProblem p = step.problem();
        putMaps(p, step.q(), step.k(), step.v());
        stepKernels.get(p.ringStepKernelName()).launch(p.launchShape(), stream, args.step(step), false);
    }

    /**
     * Enqueues the last two steps of a ring as one launch (see {@link RingLastSteps}); {@code ctx}
     * (the rank's {@code iris.deviceContext()}) bounds the wait for the second shard.
     */
    public synchronized void ringLastSteps(DeviceContext ctx, RingLastSteps steps, Stream stream) {
        String op = "ring attention last steps";
        requireRingKernels(op);
        AttentionChecks.notNull(op, "ctx", ctx);
        AttentionChecks.notNull(op, "steps", steps);
        AttentionChecks.notNull(op, "stream", stream);
        RingStep first = steps.first();
        AttentionProblem p = first.problem();
        putMaps(p, first.q(), first.k(), first.v());
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
     * ring of one step is that step alone. Every launch is built before any is enqueued.
     */
    public synchronized void ring(DeviceContext ctx, RingStep[] steps, long lastReady, Stream stream) {
        String op = "ring attention";
        AttentionChecks.notNull(op, "steps", steps);
        if (steps.length == 0) {
            throw AttentionChecks.fail(op, "steps is empty; a ring has at least one step");
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

    /** The maps of Q and of the (first) K/V shard. */
    private void putMaps(AttentionProblem p, long q, long k, long v) {
        putMap(args.qMap(), p, q, p.qRows());
        putMap(args.kMap(), p, k, p.kvRows());
        putMap(args.vMap(), p, v, p.kvRows());
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
        return "Attention(GPU " + device.device() + " " + device.name() + ", " + device.multiprocessorCount() + " SMs"
                + (stepUnavailable != null ? ", no ring step" : "") + (closed.get() ? ", closed" : "") + ")";
    }
}

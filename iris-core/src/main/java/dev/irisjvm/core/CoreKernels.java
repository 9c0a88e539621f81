package dev.irisjvm.core;

import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The kernels behind the host API (tile operations, factories, barrier), loaded from the fatbins
 * that iris-native ships, and the launch shapes they use. In checked mode the modules that reach
 * peers' heaps (tile operations, barrier) load in their bounds-checked variants
 * ({@code NAME.checked.fatbin}, built with {@code -DIRIS_CHECKED=1}). Each kernel takes one argument
 * struct of iris/abi/core.h ({@link CoreArgs}).
 */
final class CoreKernels implements AutoCloseable {
    private static final int THREADS = KernelAbi.IRIS_CORE_THREADS;
    /** Bytes one block should have in flight before another block is worth launching. */
    private static final long BYTES_PER_BLOCK = THREADS * 64L;

    private static final LaunchShape BARRIER_SHAPE = LaunchShape.of(1, KernelAbi.IRIS_CORE_BARRIER_THREADS);

    /** The wait site of the barrier, so that a timeout names the operation (see DeviceStatusRecord). */
    static final int SITE_BARRIER = KernelAbi.IRIS_CORE_SITE_BARRIER;

    static final String TILE_OPS_MODULE = "iris_tile_ops";
    static final String FILL_MODULE = "iris_fill";
    static final String BARRIER_MODULE = "iris_barrier";
    private static final String COPY = "iris_tile_copy_b";
    private static final String FILL = "iris_fill_b";
    private static final String ARANGE = "iris_arange";
    private static final String RANDOM = "iris_random";
    private static final String BARRIER = "iris_barrier";
    private static final int[] WIDTHS = {1, 2, 4, 8};
    /** The types with an atomic-add kernel: every one but U8. */
    private static final Set<DType> ATOMIC_ADD_TYPES = EnumSet.complementOf(EnumSet.of(DType.U8));

    private final KernelModule tileOps;
    private final KernelModule fill;
    private final KernelModule barrier;
    private final int maxBlocks;
    private final CoreArgs args = new CoreArgs();
    /** Looked up once: a launch on the hot path does no string building or map lookup. */
    private final Kernel[] copyByWidth = new Kernel[9];
    private final Kernel[] fillByWidth = new Kernel[9];
    private final Map<DType, Kernel> atomicAddByType = new EnumMap<>(DType.class);
    private final Kernel arangeKernel;
    private final Kernel randomKernel;
    private final Kernel barrierKernel;

    CoreKernels(int multiprocessors, boolean checked) {
        this.maxBlocks = Math.max(1, multiprocessors * 4);
        KernelModule t = null, f = null;
        try {
            t = load(TILE_OPS_MODULE, checked);
            f = load(FILL_MODULE, false);  // touches only this rank's memory: no checked variant
            this.barrier = load(BARRIER_MODULE, checked);
        } catch (RuntimeException e) {
            if (t != null) t.close();
            if (f != null) f.close();
            args.close();
            throw e;
        }
        this.tileOps = t;
        this.fill = f;
        for (int width : WIDTHS) {
            copyByWidth[width] = tileOps.kernel(COPY + width);
            fillByWidth[width] = fill.kernel(FILL + width);
        }
        for (DType dtype : ATOMIC_ADD_TYPES) {
            atomicAddByType.put(dtype, tileOps.kernel(atomicAddKernel(dtype)));
        }
        this.arangeKernel = fill.kernel(ARANGE);
        this.randomKernel = fill.kernel(RANDOM);
        this.barrierKernel = barrier.kernel(BARRIER);
    }

    private static String atomicAddKernel(DType dtype) {
        return "iris_tile_atomic_add_" + dtype.name().toLowerCase(Locale.ROOT);
    }

    /** Every kernel an instance looks up, by module: what the fatbins must hold. */
    static Map<String, List<String>> kernelNames() {
        List<String> tileOps = new ArrayList<>();
        List<String> fills = new ArrayList<>(List.of(ARANGE, RANDOM));
        for (int width : WIDTHS) {
            tileOps.add(COPY + width);
            fills.add(FILL + width);
        }
        for (DType dtype : ATOMIC_ADD_TYPES) {
            tileOps.add(atomicAddKernel(dtype));
        }
        return Map.of(TILE_OPS_MODULE, tileOps, FILL_MODULE, fills, BARRIER_MODULE, List.of(BARRIER));
    }

    private static KernelModule load(String name, boolean checked) {
        return KernelModule.fromResource(IrisRuntime.class, "/dev/irisjvm/runtime/kernels/" + name + ".fatbin", checked);
    }

    private LaunchShape shapeFor(long bytes) {
        long blocks = Math.min(maxBlocks, Math.max(1, (bytes + BYTES_PER_BLOCK - 1) / BYTES_PER_BLOCK));
        return LaunchShape.of((int) blocks, THREADS);
    }

    /** dst (on dstRank) = src (on srcRank), both rows x cols windows with leading dimensions in elements. */
    synchronized void tileCopy(DeviceContext ctx, int elementBytes, long dst, long ldDst, int dstRank, long src, long ldSrc,
                               int srcRank, long rows, long cols, Stream stream) {
        copyByWidth[elementBytes].launch(shapeFor(rows * cols * elementBytes), stream,
                args.tile(ctx.bytesUnsafe(), dst, ldDst, dstRank, src, ldSrc, srcRank, rows, cols), false);
    }

    /** dst (on dstRank) += src (local), element by element with atomics. */
    synchronized void tileAtomicAdd(DeviceContext ctx, DType dtype, long dst, long ldDst, int dstRank, long src, long ldSrc,
                                    long rows, long cols, Stream stream) {
        if (!ATOMIC_ADD_TYPES.contains(dtype)) {
            throw new IllegalArgumentException("atomicAdd: dtype U8 has no atomic add; use I32");
        }
        atomicAddByType.get(dtype).launch(shapeFor(rows * cols * dtype.byteSize()), stream,
                args.tile(ctx.bytesUnsafe(), dst, ldDst, dstRank, src, ldSrc, 0, rows, cols), false);
    }

    /** Fills n elements of the given width with the bit pattern. */
    synchronized void fillPattern(long dst, long n, int elementBytes, long pattern, Stream stream) {
        fillByWidth[elementBytes].launch(shapeFor(n * elementBytes), stream, args.fill(dst, n, pattern), false);
    }

    synchronized void arange(long dst, long n, DType dtype, double start, double step, Stream stream) {
        arangeKernel.launch(shapeFor(n * dtype.byteSize()), stream, args.arange(dst, n, dtype, start, step), false);
    }

    /** {@code distribution}: an iris_distribution of iris/abi/core.h (uniform, normal, integer). */
    synchronized void random(long dst, long n, DType dtype, int distribution, double a, double b, long seed, Stream stream) {
        randomKernel.launch(shapeFor(n * dtype.byteSize()), stream,
                args.random(dst, n, dtype, distribution, a, b, seed), false);
    }

    synchronized void barrier(DeviceContext ctx, Stream stream) {
        barrierKernel.launch(BARRIER_SHAPE, stream, args.barrier(ctx.bytesUnsafe(), SITE_BARRIER), false);
    }

    @Override
    public void close() {
        tileOps.close();
        fill.close();
        barrier.close();
        args.close();
    }
}

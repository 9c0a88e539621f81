package dev.irisjvm.core;

import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.runtime.global.IrisRuntime;

/**
 * The kernels behind the host API (tile operations, factories, barrier), loaded from the fatbins
 * that iris-native ships, and the launch shapes they use. In checked mode the modules that reach
 * peers' heaps (tile operations, barrier) load in their bounds-checked variants
 * ({@code NAME.checked.fatbin}, built with {@code -DIRIS_CHECKED=1}).
 */
final class CoreKernels implements AutoCloseable {
    private static final int THREADS = 512;
    /** Bytes one block should have in flight before another block is worth launching. */
    private static final long BYTES_PER_BLOCK = THREADS * 64L;

    private static final LaunchShape BARRIER_SHAPE = LaunchShape.of(1, 32);

    /** Sites of device waits, so that a timeout names the operation (see DeviceStatusRecord). */
    static final int SITE_BARRIER = 1;

    private final KernelModule tileOps;
    private final KernelModule fill;
    private final KernelModule barrier;
    private final int maxBlocks;
    private final KernelArgs args = new KernelArgs();
    /** Looked up once: a launch on the hot path does no string building or map lookup. */
    private final Kernel[] copyByWidth = new Kernel[9];
    private final Kernel barrierKernel;

    CoreKernels(int multiprocessors, boolean checked) {
        this.maxBlocks = Math.max(1, multiprocessors * 4);
        KernelModule t = null, f = null;
        try {
            t = load("iris_tile_ops", checked);
            f = load("iris_fill", false);  // touches only this rank's memory: no checked variant
            this.barrier = load("iris_barrier", checked);
        } catch (RuntimeException e) {
            if (t != null) t.close();
            if (f != null) f.close();
            throw e;
        }
        this.tileOps = t;
        this.fill = f;
        for (int width : new int[] {1, 2, 4, 8}) {
            copyByWidth[width] = tileOps.kernel("iris_tile_copy_b" + width);
        }
        this.barrierKernel = barrier.kernel("iris_barrier");
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
        Kernel k = copyByWidth[elementBytes];
        args.clear().putBytes(ctx.bytesUnsafe(), DeviceContext.ALIGNMENT)
                .putLong(dst).putLong(ldDst).putInt(dstRank).putLong(src).putLong(ldSrc).putInt(srcRank)
                .putLong(rows).putLong(cols);
        k.launch(shapeFor(rows * cols * elementBytes), stream, args);
    }

    /** dst (on dstRank) += src (local), element by element with atomics. */
    synchronized void tileAtomicAdd(DeviceContext ctx, DType dtype, long dst, long ldDst, int dstRank, long src, long ldSrc,
                                    long rows, long cols, Stream stream) {
        String suffix = switch (dtype) {
            case F32 -> "f32";
            case F64 -> "f64";
            case I32 -> "i32";
            case I64 -> "i64";
            case F16 -> "f16";
            case BF16 -> "bf16";
            case U8 -> throw new IllegalArgumentException("atomicAdd: dtype U8 has no atomic add; use I32");
        };
        args.clear().putBytes(ctx.bytesUnsafe(), DeviceContext.ALIGNMENT)
                .putLong(dst).putLong(ldDst).putInt(dstRank).putLong(src).putLong(ldSrc).putLong(rows).putLong(cols);
        tileOps.kernel("iris_tile_atomic_add_" + suffix).launch(shapeFor(rows * cols * dtype.byteSize()), stream, args);
    }

    /** Fills n elements of the given width with the bit pattern. */
    synchronized void fillPattern(long dst, long n, int elementBytes, long pattern, Stream stream) {
        args.clear().putLong(dst).putLong(n);
        switch (elementBytes) {
            case 1 -> args.putByte((byte) pattern);
            case 2 -> args.putShort((short) pattern);
            case 4 -> args.putInt((int) pattern);
            default -> args.putLong(pattern);
        }
        fill.kernel("iris_fill_b" + elementBytes).launch(shapeFor(n * elementBytes), stream, args);
    }

    synchronized void arange(long dst, long n, DType dtype, double start, double step, Stream stream) {
        args.clear().putLong(dst).putLong(n).putInt(dtype.code()).putDouble(start).putDouble(step);
        fill.kernel("iris_arange").launch(shapeFor(n * dtype.byteSize()), stream, args);
    }

    /** Distribution codes of iris_random: 0 uniform [a, b), 1 normal (mean a, std b), 2 integer [a, b). */
    synchronized void random(long dst, long n, DType dtype, int distribution, double a, double b, long seed, Stream stream) {
        args.clear().putLong(dst).putLong(n).putInt(dtype.code()).putInt(distribution).putDouble(a).putDouble(b).putLong(seed);
        fill.kernel("iris_random").launch(shapeFor(n * dtype.byteSize()), stream, args);
    }

    synchronized void barrier(DeviceContext ctx, Stream stream) {
        args.clear().putBytes(ctx.bytesUnsafe(), DeviceContext.ALIGNMENT).putInt(SITE_BARRIER);
        barrierKernel.launch(BARRIER_SHAPE, stream, args);
    }

    @Override
    public void close() {
        tileOps.close();
        fill.close();
        barrier.close();
        args.close();
    }
}

package dev.irisjvm.core;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_barrier_args;
import dev.irisjvm.runtime.abi.iris_fill_args;
import dev.irisjvm.runtime.abi.iris_tile_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The argument structs of the kernels behind the host API (iris/abi/core.h), one of each, refilled
 * by every call: the launch copies the struct, so the next call may refill it at once. Not
 * thread-safe (CoreKernels' calls are synchronized).
 */
final class CoreArgs implements AutoCloseable {
    private final iris_tile_args tile = new iris_tile_args();
    private final iris_fill_args fill = new iris_fill_args();
    private final iris_barrier_args barrier = new iris_barrier_args();
    private final BytePointer tileCtx = new BytePointer(tile.ctx());
    private final BytePointer barrierCtx = new BytePointer(barrier.ctx());
    private final DeviceAddress dst = new DeviceAddress();
    private final DeviceAddress src = new DeviceAddress();

    /** A rows x cols window: copies read src on srcRank; atomic adds read a local src (srcRank 0). */
    iris_tile_args tile(byte[] ctx, long dstAddress, long ldDst, int dstRank, long srcAddress, long ldSrc, int srcRank,
                        long rows, long cols) {
        tileCtx.put(ctx);
        return tile.dst(dst.at(dstAddress)).ld_dst(ldDst).dst_rank(dstRank).src(src.at(srcAddress)).ld_src(ldSrc)
                .src_rank(srcRank).rows(rows).cols(cols);
    }

    /** n elements = the bit pattern, in the element's low bytes. */
    iris_fill_args fill(long dstAddress, long n, long pattern) {
        return fill.dst(dst.at(dstAddress)).n(n).pattern(pattern);
    }

    /** dst[i] = start + i step. */
    iris_fill_args arange(long dstAddress, long n, DType dtype, double start, double step) {
        return fill.dst(dst.at(dstAddress)).n(n).dtype(dtype.code()).a(start).b(step);
    }

    /** {@code distribution}: an iris_distribution (uniform [a, b), normal (mean a, deviation b), integer [a, b)). */
    iris_fill_args random(long dstAddress, long n, DType dtype, int distribution, double a, double b, long seed) {
        return fill.dst(dst.at(dstAddress)).n(n).dtype(dtype.code()).distribution(distribution).a(a).b(b).seed(seed);
    }

    iris_barrier_args barrier(byte[] ctx, int site) {
        barrierCtx.put(ctx);
        return barrier.site(site);
    }

    @Override
    public void close() {
        tile.close();
        fill.close();
        barrier.close();
    }
}

package dev.irisjvm.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The host's copy of {@code iris::Ctx} (ctx.cuh): what a kernel needs to reach every rank's heap,
 * packed byte for byte so that it can be passed to kernels by value as their first argument.
 *
 * <pre>{@code
 * kernel.launch(shape, stream, iris.deviceContext().bytes(), tensor.deviceAddress(), n);
 * }</pre>
 */
public final class DeviceContext {
    /** sizeof(iris::Ctx); pinned by static_asserts in ctx.cuh. */
    public static final int BYTES = 112;
    /** iris::kMaxRanks. */
    public static final int MAX_RANKS = 8;
    /** Alignment of the struct as a kernel argument. */
    public static final int ALIGNMENT = 8;
    /** offsetof(iris::Ctx, barrier_flags) and offsetof(iris::Ctx, barrier_epoch), pinned in ctx.cuh. */
    private static final int BARRIER_FLAGS_FIELD = 32;
    private static final int BARRIER_EPOCH_FIELD = 40;

    private final int rank;
    private final int world;
    private final long[] bases;
    private final byte[] bytes;

    DeviceContext(int rank, int world, long heapSize, long timeoutNanos, long statusAddress,
                  long barrierFlagsAddress, long barrierEpochAddress, long[] bases) {
        if (world > MAX_RANKS) {
            throw new IllegalArgumentException("rank " + rank + ": world size " + world + " exceeds the "
                    + MAX_RANKS + " ranks one device context can address");
        }
        this.rank = rank;
        this.world = world;
        this.bases = bases.clone();
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(rank).putInt(world).putLong(heapSize).putLong(timeoutNanos).putLong(statusAddress)
                .putLong(barrierFlagsAddress).putLong(barrierEpochAddress);
        for (int r = 0; r < MAX_RANKS; r++) {
            b.putLong(r < world ? bases[r] : 0L);
        }
        this.bytes = b.array();
    }

    private DeviceContext(int rank, int world, long[] bases, byte[] bytes) {
        this.rank = rank;
        this.world = world;
        this.bases = bases;
        this.bytes = bytes;
    }

    /** The same context with another barrier's state (a {@link DeviceBarrier}'s slot). */
    DeviceContext withBarrier(long barrierFlagsAddress, long barrierEpochAddress) {
        ByteBuffer b = ByteBuffer.wrap(bytes.clone()).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(BARRIER_FLAGS_FIELD, barrierFlagsAddress).putLong(BARRIER_EPOCH_FIELD, barrierEpochAddress);
        return new DeviceContext(rank, world, bases, b.array());
    }

    /** The packed struct; pass it to {@code KernelArgs.putBytes(bytes, ALIGNMENT)}. */
    public byte[] bytes() {
        return bytes.clone();
    }

    byte[] bytesUnsafe() {
        return bytes;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return world;
    }

    /** Rank {@code r}'s heap base as mapped in this process. */
    public long heapBase(int r) {
        return bases[r];
    }

    /** Translates a symmetric address of this rank's heap to rank {@code toRank}'s copy. */
    public long translate(long address, int toRank) {
        return address - bases[rank] + bases[toRank];
    }
}

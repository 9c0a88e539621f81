package dev.irisjvm.core;

import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_ctx;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The host's copy of the context every kernel receives ({@code iris_ctx}, iris/abi/ctx.h; the
 * device code's {@code iris::Ctx}): what a kernel needs to reach every rank's heap, packed at the
 * offsets the C compiler gives the struct, so that it can be passed to kernels by value.
 *
 * <p>It describes the node team ({@link Iris#node()}): {@link #rank()} is this rank's index in
 * its node and {@link #worldSize()} the node's size, the ranks whose heaps {@code bases[]} maps.
 * On a job of one node these are the world rank and the world size.
 *
 * <pre>{@code
 * kernel.launch(shape, stream, iris.deviceContext().bytes(), tensor.deviceAddress(), n);
 * }</pre>
 */
public final class DeviceContext {
    /** sizeof(iris_ctx). */
    public static final int BYTES = AbiLayout.size(iris_ctx.class);
    /** IRIS_MAX_RANKS: the most ranks one context (one node) can address. */
    public static final int MAX_RANKS = KernelAbi.IRIS_MAX_RANKS;
    /** Alignment of the struct as a kernel argument. */
    public static final int ALIGNMENT = 8;
    private static final int RANK = AbiLayout.offset(iris_ctx.class, "rank");
    private static final int WORLD = AbiLayout.offset(iris_ctx.class, "world");
    private static final int HEAP_SIZE = AbiLayout.offset(iris_ctx.class, "heap_size");
    private static final int TIMEOUT = AbiLayout.offset(iris_ctx.class, "timeout_ns");
    private static final int STATUS = AbiLayout.offset(iris_ctx.class, "status");
    private static final int BARRIER_FLAGS = AbiLayout.offset(iris_ctx.class, "barrier_flags");
    private static final int BARRIER_EPOCH = AbiLayout.offset(iris_ctx.class, "barrier_epoch");
    private static final int BASES = AbiLayout.offset(iris_ctx.class, "bases");

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
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.nativeOrder());
        b.putInt(RANK, rank).putInt(WORLD, world).putLong(HEAP_SIZE, heapSize).putLong(TIMEOUT, timeoutNanos)
                .putLong(STATUS, statusAddress).putLong(BARRIER_FLAGS, barrierFlagsAddress)
                .putLong(BARRIER_EPOCH, barrierEpochAddress);
        for (int r = 0; r < world; r++) {
            b.putLong(BASES + 8 * r, bases[r]);
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
        ByteBuffer b = ByteBuffer.wrap(bytes.clone()).order(ByteOrder.nativeOrder());
        b.putLong(BARRIER_FLAGS, barrierFlagsAddress).putLong(BARRIER_EPOCH, barrierEpochAddress);
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

    /** Node rank {@code r}'s heap base as mapped in this process. */
    public long heapBase(int r) {
        checkNodeRank(r, "heapBase");
        return bases[r];
    }

    /**
     * Translates a symmetric address of this rank's heap to node rank {@code toRank}'s copy.
     *
     * @throws IllegalArgumentException when {@code toRank} is not in {@code [0, worldSize())}: the
     *         heaps of other nodes are not mapped here
     */
    public long translate(long address, int toRank) {
        checkNodeRank(toRank, "translate");
        return address - bases[rank] + bases[toRank];
    }

    private void checkNodeRank(int r, String call) {
        if (r < 0 || r >= world) {
            throw new IllegalArgumentException("node rank " + rank + ": DeviceContext." + call + ": rank " + r
                    + " is out of range: not a rank of this node; the context maps the heaps of node ranks [0, " + world + ")");
        }
    }
}

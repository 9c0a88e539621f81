package dev.irisjvm.core;

import dev.irisjvm.core.gpu.Stream;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A device-side barrier of all ranks with state of its own. {@link Iris#barrier(Stream)} keeps one
 * epoch per rank, so two of its barriers on different streams that overlap on the GPU may lose an
 * epoch update or pair with each other across ranks (rank 0's stream-A barrier with rank 1's
 * stream-B one), and then prove nothing. Give each stream or operation that closes with a barrier
 * a {@code DeviceBarrier} of its own: barriers of one instance pair only with the same instance's
 * on the other ranks. Use one instance from one stream at a time (or order its uses).
 *
 * <pre>{@code
 * try (DeviceBarrier a = iris.newBarrier(); DeviceBarrier b = iris.newBarrier()) {  // collective
 *     producerKernel(streamA);
 *     a.enqueue(streamA);     // every rank's work before this on streamA is done and visible
 *     otherWork(streamB);
 *     b.enqueue(streamB);     // independent of a
 * }
 * }</pre>
 *
 * <p>Creation and {@link #close()} are collective: every rank creates its barriers in the same
 * order (they take the same slot of the reserved block on every rank, which creation checks).
 */
public final class DeviceBarrier implements AutoCloseable {
    private final Iris iris;
    private final int slot;
    private final DeviceContext context;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DeviceBarrier(Iris iris, int slot, DeviceContext context) {
        this.iris = iris;
        this.slot = slot;
        this.context = context;
    }

    /** See {@link Iris#newBarrier()}. */
    static DeviceBarrier create(Iris iris, BarrierSlots slots, DeviceContext base, long heapBase) {
        int slot = slots.acquire(iris.rank());
        try {
            byte[][] all = iris.allGather(ByteBuffer.allocate(4).putInt(slot).array());
            for (int r = 0; r < all.length; r++) {
                int theirs = ByteBuffer.wrap(all[r]).getInt();
                if (theirs != slot) {
                    throw new IrisException("rank " + iris.rank() + ": newBarrier: rank " + r + " got barrier slot " + theirs
                            + ", this rank " + slot + "; every rank must create and close its device barriers (and the"
                            + " operations that own them) in the same order");
                }
            }
        } catch (RuntimeException e) {
            slots.release(slot);
            throw e;
        }
        DeviceContext context = base.withBarrier(heapBase + BarrierSlots.flagsOffset(slot), heapBase + BarrierSlots.epochOffset(slot));
        return new DeviceBarrier(iris, slot, context);
    }

    /**
     * Enqueues the barrier on {@code stream}: work enqueued after it on any rank's use of this
     * barrier runs after work enqueued before it on every rank, and memory written before it is
     * visible after it. A peer that does not arrive within the device timeout makes the next
     * {@link Iris#synchronize} throw.
     */
    public void enqueue(Stream stream) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + iris.rank() + ": DeviceBarrier (slot " + slot + ") used after close()");
        }
        if (stream == null) {
            throw new IllegalArgumentException("rank " + iris.rank() + ": DeviceBarrier.enqueue: stream must not be null");
        }
        iris.barrier(context, stream);
    }

    /** Its slot in the reserved block (1 ..), the same on every rank. */
    public int slot() {
        return slot;
    }

    /**
     * Collective: releases the slot for a later barrier. The flags stay as they are; a barrier that
     * takes the slot later starts from the epoch this one reached, so old arrivals never count.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            iris.releaseBarrier(slot);
        }
    }
}

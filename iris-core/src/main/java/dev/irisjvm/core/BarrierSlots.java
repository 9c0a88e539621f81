package dev.irisjvm.core;

import java.util.BitSet;

/**
 * The device barriers' state in the reserved block at the start of every rank's heap: slot s holds
 * the arrival flags of every rank (iris::kMaxRanks x u64, written by the peers) and this rank's
 * epoch counter. Slot 0 serves {@link Iris#barrier(dev.irisjvm.core.gpu.Stream)}; every
 * {@link DeviceBarrier} takes a slot of its own, so that barriers of different operations (on
 * different streams) neither share an epoch that two streams update at once nor pair one rank's
 * barrier of operation A with another rank's of operation B.
 *
 * <p>Slots are handed out like heap blocks: the lowest free one, so that ranks that create and
 * close their barriers in the same order hold the same slot numbers (checked at creation).
 */
final class BarrierSlots {
    /** Bytes of one slot: 64 of flags, the epoch, padding to keep slots on their own lines. */
    static final long SLOT_BYTES = 128;
    static final long FLAGS_OFFSET = 0;
    static final long EPOCH_OFFSET = 64;
    /** Slots in the reserved block; slot 0 is Iris.barrier's. */
    static final int SLOTS = (int) (SymmetricHeap.RESERVED_BYTES / SLOT_BYTES);

    private final BitSet taken = new BitSet(SLOTS);

    BarrierSlots() {
        taken.set(0);
    }

    /** The lowest free slot. */
    synchronized int acquire(int rank) {
        int slot = taken.nextClearBit(1);
        if (slot >= SLOTS) {
            throw new IrisException("rank " + rank + ": all " + (SLOTS - 1) + " device barriers are in use; close"
                    + " operations (fused GEMMs, collectives, attention) that are no longer needed");
        }
        taken.set(slot);
        return slot;
    }

    synchronized void release(int slot) {
        if (slot <= 0 || slot >= SLOTS || !taken.get(slot)) {
            throw new IllegalStateException("barrier slot " + slot + " is not in use");
        }
        taken.clear(slot);
    }

    /** Offset of slot {@code slot}'s arrival flags in the heap. */
    static long flagsOffset(int slot) {
        return slot * SLOT_BYTES + FLAGS_OFFSET;
    }

    /** Offset of slot {@code slot}'s epoch counter in the heap. */
    static long epochOffset(int slot) {
        return slot * SLOT_BYTES + EPOCH_OFFSET;
    }
}

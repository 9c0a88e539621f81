package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class BarrierSlotsTest {
    @Test
    void lowestFreeSlotSoThatRanksAgree() {
        BarrierSlots slots = new BarrierSlots();
        assertEquals(1, slots.acquire(0), "slot 0 is Iris.barrier's");
        assertEquals(2, slots.acquire(0));
        assertEquals(3, slots.acquire(0));
        slots.release(2);
        assertEquals(2, slots.acquire(0), "a released slot is taken again first");
        assertEquals(4, slots.acquire(0));
    }

    @Test
    void slotsLieInTheReservedBlockWithoutOverlap() {
        assertEquals(512, BarrierSlots.SLOTS);
        for (int s = 0; s < BarrierSlots.SLOTS; s++) {
            long flags = BarrierSlots.flagsOffset(s);
            long epoch = BarrierSlots.epochOffset(s);
            assertEquals(flags + 8L * DeviceContext.MAX_RANKS, epoch, "epoch right after the flags of slot " + s);
            assertEquals(true, epoch + 8 <= BarrierSlots.flagsOffset(s + 1) && epoch + 8 <= SymmetricHeap.RESERVED_BYTES);
        }
    }

    @Test
    void exhaustionAndBadReleasesAreNamed() {
        BarrierSlots slots = new BarrierSlots();
        for (int i = 1; i < BarrierSlots.SLOTS; i++) {
            slots.acquire(3);
        }
        IrisException e = assertThrows(IrisException.class, () -> slots.acquire(3));
        assertEquals("rank 3: all 511 device barriers are in use; close operations (fused GEMMs, collectives, attention)"
                + " that are no longer needed", e.getMessage());
        assertThrows(IllegalStateException.class, () -> slots.release(0));
        slots.release(5);
        assertThrows(IllegalStateException.class, () -> slots.release(5));
    }
}

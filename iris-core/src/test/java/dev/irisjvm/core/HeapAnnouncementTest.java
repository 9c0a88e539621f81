package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.internal.IpcHandles;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HeapAnnouncementTest {
    private static byte[] handle(long seed) {
        byte[] h = new byte[IpcHandles.HANDLE_BYTES];
        new Random(seed).nextBytes(h);
        return h;
    }

    @Test
    void roundTripsWhatPeersNeed() {
        HeapAnnouncement a = new HeapAnnouncement(handle(1), 1L << 30, "0000:1b:00", "gpu-node-07");
        byte[] wire = a.encode();
        assertEquals(HeapAnnouncement.BYTES, wire.length);
        HeapAnnouncement b = HeapAnnouncement.decode(wire);
        assertArrayEquals(a.ipcHandle(), b.ipcHandle());
        assertEquals(1L << 30, b.heapSize());
        assertEquals("0000:1b:00", b.pciAddress());
        assertEquals("gpu-node-07", b.host());
    }

    @Test
    void longHostNamesAreCutNotOverflowed() {
        String host = "h".repeat(100);
        HeapAnnouncement b = HeapAnnouncement.decode(new HeapAnnouncement(handle(2), 4096, "0000:43:00", host).encode());
        assertEquals("h".repeat(64), b.host());
        assertEquals("0000:43:00", b.pciAddress());
    }

    @Test
    void theSameGpuIsTheSameHostAndPciAddress() {
        HeapAnnouncement a = new HeapAnnouncement(handle(3), 1, "0000:1b:00", "n1");
        assertTrue(a.sameGpuAs(new HeapAnnouncement(handle(4), 1, "0000:1b:00", "n1")));
        assertFalse(a.sameGpuAs(new HeapAnnouncement(handle(5), 1, "0000:43:00", "n1")));
        assertFalse(a.sameGpuAs(new HeapAnnouncement(handle(6), 1, "0000:1b:00", "n2")));
    }
}

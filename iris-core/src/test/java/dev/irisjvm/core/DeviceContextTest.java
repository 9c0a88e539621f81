package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.runtime.abi.iris_ctx;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;
import org.junit.jupiter.api.Test;

/** The packed context reads back through the generated iris_ctx (the C compiler's layout of iris/abi/ctx.h). */
class DeviceContextTest {
    @Test
    void layoutIsTheGeneratedStructs() {
        long[] bases = {0x7000_0000_0000L, 0x7100_0000_0000L, 0x7200_0000_0000L};
        DeviceContext c = new DeviceContext(1, 3, 1L << 30, 5_000_000_000L, 0x1111L, 0x2222L, 0x3333L, bases);
        assertEquals(Loader.sizeof(iris_ctx.class), c.bytes().length);
        try (iris_ctx s = new iris_ctx()) {
            new BytePointer(s).put(c.bytes());
            assertEquals(1, s.rank());
            assertEquals(3, s.world());
            assertEquals(1L << 30, s.heap_size());
            assertEquals(5_000_000_000L, s.timeout_ns());
            assertEquals(0x1111L, s.status().address());
            assertEquals(0x2222L, s.barrier_flags().address());
            assertEquals(0x3333L, s.barrier_epoch().address());
            for (int r = 0; r < DeviceContext.MAX_RANKS; r++) {
                assertEquals(r < 3 ? bases[r] : 0L, s.bases(r), "bases[" + r + "]");
            }
        }
    }

    @Test
    void translateMovesBetweenHeaps() {
        long[] bases = {1000, 50_000};
        DeviceContext c = new DeviceContext(0, 2, 4096, 1, 0, 0, 0, bases);
        assertEquals(50_123, c.translate(1123, 1));
        assertEquals(1123, c.translate(1123, 0));
    }

    @Test
    void rejectsWorldsBeyondEightRanks() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DeviceContext(0, 9, 4096, 1, 0, 0, 0, new long[9]));
        assertEquals(true, e.getMessage().contains("world size 9"), e.getMessage());
    }

    @Test
    void aBarrierOfItsOwnChangesOnlyTheBarrierFields() {
        long[] bases = {0x7000_0000_0000L, 0x7100_0000_0000L};
        DeviceContext c = new DeviceContext(0, 2, 1L << 30, 7, 0x1111L, 0x2222L, 0x3333L, bases);
        DeviceContext d = c.withBarrier(0x4444L, 0x5555L);
        ByteBuffer before = ByteBuffer.wrap(c.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer after = ByteBuffer.wrap(d.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x4444L, after.getLong(32));
        assertEquals(0x5555L, after.getLong(40));
        assertEquals(0x2222L, before.getLong(32), "the original is unchanged");
        for (int at = 0; at < DeviceContext.BYTES; at += 8) {
            if (at != 32 && at != 40) {
                assertEquals(before.getLong(at), after.getLong(at), "bytes " + at);
            }
        }
        assertEquals(c.translate(0x7000_0000_0100L, 1), d.translate(0x7000_0000_0100L, 1));
    }

    @Test
    void aRankOutsideTheNodeIsRejectedNotTranslated() {
        DeviceContext c = new DeviceContext(1, 2, 4096, 1, 0, 0, 0, new long[] {1000, 50_000});
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.translate(1123, 2));
        assertEquals("node rank 1: DeviceContext.translate: rank 2 is out of range: not a rank of this node; the context maps the"
                + " heaps of node ranks [0, 2)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c.translate(1123, -1));
        assertThrows(IllegalArgumentException.class, () -> c.heapBase(2));
    }
}

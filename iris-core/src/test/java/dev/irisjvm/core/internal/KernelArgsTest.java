package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Arguments land at their natural alignment, in order, with their exact bytes. */
class KernelArgsTest {
    @Test
    void packsAtNaturalAlignment() {
        try (KernelArgs a = new KernelArgs()) {
            byte[] ctx = new byte[12];
            ctx[0] = 9;
            a.putByte((byte) 1).putLong(0x1122334455667788L).putShort((short) 7).putInt(-5).putBytes(ctx, 8)
                    .putDouble(2.5).putFloat(1.5f);
            assertEquals(7, a.count());
            int[] expected = {0, 8, 16, 20, 24, 40, 48};
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], a.offsets().get(i), "offset of argument " + i);
            }
            var b = a.buffer().capacity(KernelArgs.CAPACITY).asByteBuffer().order(ByteOrder.nativeOrder());
            assertEquals(1, b.get(0));
            assertEquals(0x1122334455667788L, b.getLong(8));
            assertEquals(7, b.getShort(16));
            assertEquals(-5, b.getInt(20));
            assertEquals(9, b.get(24));
            assertEquals(2.5, b.getDouble(40));
            assertEquals(1.5f, b.getFloat(48));
        }
    }

    @Test
    void resetKeepsTheMarkedPrefix() {
        try (KernelArgs a = new KernelArgs()) {
            byte[] ctx = new byte[12];
            ctx[3] = 4;
            a.putBytes(ctx, 8).putLong(77).mark();
            a.putInt(1).putLong(2);
            a.reset().putShort((short) 3).putLong(0x55L);
            assertEquals(4, a.count());
            int[] expected = {0, 16, 24, 32};
            for (int i = 0; i < expected.length; i++) {
                assertEquals(expected[i], a.offsets().get(i), "offset of argument " + i);
            }
            var b = a.buffer().capacity(KernelArgs.CAPACITY).asByteBuffer().order(ByteOrder.nativeOrder());
            assertEquals(4, b.get(3));
            assertEquals(77, b.getLong(16));
            assertEquals(3, b.getShort(24));
            assertEquals(0x55L, b.getLong(32));
            a.clear().reset().putInt(9);
            assertEquals(1, a.count(), "clear drops the mark");
            assertEquals(0, a.offsets().get(0));
        }
    }

    @Test
    void boxedValuesAndLimits() {
        try (KernelArgs a = new KernelArgs()) {
            a.putAll(1, 2L, 3f, 4.0, (short) 5, (byte) 6, new byte[16]);
            assertEquals(7, a.count());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.putAll("text"));
            assertEquals(true, e.getMessage().contains("java.lang.String"), e.getMessage());
            a.clear();
            assertThrows(IllegalArgumentException.class, () -> a.putBytes(new byte[KernelArgs.CAPACITY + 1], 8));
            assertThrows(IllegalArgumentException.class, () -> a.putBytes(new byte[4], 3));
        }
    }
}

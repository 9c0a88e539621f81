package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SizeListTest {
    @Test
    void geometricHitsMaxExactly() {
        List<Long> s = SizeList.geometric(4096, 1L << 30, 4);
        assertEquals(10, s.size());
        assertEquals(4096L, s.get(0));
        assertEquals(16384L, s.get(1));
        assertEquals(1L << 30, s.get(9));
    }

    @Test
    void geometricAppendsMaxWhenFactorMissesIt() {
        assertEquals(List.of(8L, 32L, 128L, 512L, 2048L, 8192L, 32768L, 131072L, 524288L, 1048576L),
                SizeList.geometric(8, 1 << 20, 4));
        assertEquals(List.of(100L, 250L), SizeList.geometric(100, 250, 4));
    }

    @Test
    void geometricSinglePointAndNoOverflow() {
        assertEquals(List.of(64L), SizeList.geometric(64, 64, 2));
        List<Long> huge = SizeList.geometric(1L << 61, Long.MAX_VALUE, 4);
        assertEquals(List.of(1L << 61, Long.MAX_VALUE), huge);
    }

    @Test
    void geometricRejectsBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> SizeList.geometric(0, 10, 2));
        assertThrows(IllegalArgumentException.class, () -> SizeList.geometric(10, 5, 2));
        assertThrows(IllegalArgumentException.class, () -> SizeList.geometric(1, 5, 1));
    }

    @Test
    void parsesSuffixes() {
        assertEquals(4096, SizeList.parse("4096"));
        assertEquals(65536, SizeList.parse("64k"));
        assertEquals(65536, SizeList.parse("64K"));
        assertEquals(1L << 20, SizeList.parse("1m"));
        assertEquals(1L << 30, SizeList.parse("1g"));
        assertEquals(1L << 30, SizeList.parse("1GiB"));
        assertEquals(512L << 20, SizeList.parse("512MB"));
        assertEquals(8, SizeList.parse("8b"));
        assertEquals(8, SizeList.parse(" 8 B "));
    }

    @Test
    void rejectsNonSizes() {
        for (String bad : new String[] {"", "abc", "-1", "1x", "k", "99999999999g"}) {
            assertThrows(IllegalArgumentException.class, () -> SizeList.parse(bad), bad);
        }
    }

    @Test
    void formats() {
        assertEquals("8 B", SizeList.format(8));
        assertEquals("4 KiB", SizeList.format(4096));
        assertEquals("1.5 MiB", SizeList.format(3L << 19));
        assertEquals("1 GiB", SizeList.format(1L << 30));
    }
}

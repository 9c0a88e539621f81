package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TileBoundsTest {
    @Test
    void everyWindowInsideIsAcceptedAndEveryWindowOutsideRejected() {
        long tr = 7, tc = 5;
        for (long r0 = -1; r0 <= tr + 1; r0++) {
            for (long c0 = -1; c0 <= tc + 1; c0++) {
                for (long rows = 0; rows <= tr + 1; rows++) {
                    for (long cols = 0; cols <= tc + 1; cols++) {
                        boolean inside = rows >= 1 && cols >= 1 && r0 >= 0 && c0 >= 0 && r0 + rows <= tr && c0 + cols <= tc;
                        long a = r0, b = c0, c = rows, d = cols;
                        if (inside) {
                            assertDoesNotThrow(() -> Tile.checkBounds("rank 0", tr, tc, a, b, c, d));
                        } else {
                            RuntimeException e = assertThrows(RuntimeException.class,
                                    () -> Tile.checkBounds("rank 0", tr, tc, a, b, c, d));
                            assertTrue(e.getMessage().startsWith("rank 0: tile"), e.getMessage());
                        }
                    }
                }
            }
        }
    }

    @Test
    void hugeOffsetsDoNotOverflowIntoAcceptance() {
        assertThrows(IndexOutOfBoundsException.class,
                () -> Tile.checkBounds("rank 3", 10, 10, Long.MAX_VALUE - 1, 0, 5, 5));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                () -> Tile.checkBounds("rank 3", 10, 10, 8, 0, 5, 5));
        assertTrue(e.getMessage().contains("rows [8, 13)") && e.getMessage().contains("10 x 10"), e.getMessage());
    }
}

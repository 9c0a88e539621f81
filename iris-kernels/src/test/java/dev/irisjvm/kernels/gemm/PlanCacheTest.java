package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class PlanCacheTest {
    @Test
    void givesTheRulesChoiceAndKeepsTheRecentShapes() {
        PlanCache cache = new PlanCache(2, 132);
        StreamKPlan decode = cache.choose(1, 4096, 224, null, false);
        assertEquals(StreamKPlan.choose(1, 4096, 224, 132, false), decode);
        assertSame(decode, cache.choose(1, 4096, 224, null, false), "a shape seen before is not priced again");
        cache.choose(8192, 8192, 128, null, false);
        cache.choose(1, 4096, 224, null, false);               // the decode shape is now the most recent
        cache.choose(256, 4096, 224, null, false);             // a third shape drops the least recent: 8192 x 8192
        assertEquals(2, cache.size());
        assertSame(decode, cache.choose(1, 4096, 224, null, false));
    }

    /** Whether pairs pay is part of the shape: 1000 x 1000 of K 1000 and of K 1024 have the same k-blocks, not the same plan. */
    @Test
    void keepsPairsApart() {
        PlanCache cache = new PlanCache(4, 132);
        StreamKPlan offRow = cache.choose(1000, 1000, 16, null, true);
        StreamKPlan onRow = cache.choose(1000, 1000, 16, null, false);
        assertEquals(GemmTile.SHORT_PAIR, offRow.tile());
        assertNotEquals(GemmTile.SHORT_PAIR, onRow.tile());
        assertEquals(2, cache.size());
    }
}

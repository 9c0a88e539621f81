package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class PlanCacheTest {
    @Test
    void givesTheRulesChoiceAndKeepsTheRecentShapes() {
        PlanCache cache = new PlanCache(2, 132);
        StreamKPlan decode = cache.choose(1, 4096, 224, null);
        assertEquals(StreamKPlan.choose(1, 4096, 224, 132), decode);
        assertSame(decode, cache.choose(1, 4096, 224, null), "a shape seen before is not priced again");
        cache.choose(8192, 8192, 128, null);
        cache.choose(1, 4096, 224, null);                      // the decode shape is now the most recent
        cache.choose(256, 4096, 224, null);                    // a third shape drops the least recent: 8192 x 8192
        assertEquals(2, cache.size());
        assertSame(decode, cache.choose(1, 4096, 224, null));
    }
}

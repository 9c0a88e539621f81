package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.irisjvm.kernels.ccl.CclSites;
import dev.irisjvm.kernels.fused.FusedSites;
import org.junit.jupiter.api.Test;

class MoeSitesTest {
    @Test
    void describesEveryWaitAndCheck() {
        assertEquals("MoE dispatch: waiting for a peer's routes per expert (its row of the count matrix)", MoeSites.describe(9302));
        assertEquals("MoE combine: waiting for a peer's expert outputs to arrive", MoeSites.describe(MoeSites.RESULTS));
        for (int site : new int[] {MoeSites.ARRIVE, MoeSites.COUNTS, MoeSites.ROWS, MoeSites.RESULTS, MoeSites.OVER_CAPACITY,
                MoeSites.BAD_EXPERT, MoeSites.LL_ROWS, MoeSites.LL_RESULTS, MoeSites.TILE_ROWS}) {
            assertNotNull(MoeSites.describe(site), "site " + site);
            assertNull(CclSites.describe(site), "no collective claims site " + site);
            assertNull(FusedSites.describe(site), "no fused kernel claims site " + site);
        }
        assertEquals(9307, MoeSites.LL_ROWS);
        assertEquals("MoE low-latency combine: waiting for a peer's expert outputs to arrive", MoeSites.describe(9308));
        assertEquals(9309, MoeSites.TILE_ROWS);
        assertEquals(16, MoeSites.ERROR_OVER_CAPACITY);
        assertEquals(17, MoeSites.ERROR_BAD_EXPERT);
    }

    @Test
    void otherSitesAreNotTheMoeKernels() {
        assertNull(MoeSites.describe(0));
        assertNull(MoeSites.describe(7902));
        assertNull(MoeSites.describe(9300));
        assertNull(MoeSites.describe(9310));
    }
}

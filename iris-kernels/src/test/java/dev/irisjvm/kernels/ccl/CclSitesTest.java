package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CclSitesTest {
    @Test
    void describesEveryCollectiveAndWait() {
        assertEquals("ring all-reduce: waiting for a peer's data", CclSites.describe(7302));
        assertEquals("broadcast: waiting for a peer to arrive", CclSites.describe(7701));
        assertEquals("one-shot all-reduce: checking at exit that every peer arrived", CclSites.describe(7109));
        assertTrue(CclSites.describe(7908).startsWith("all-to-all-v: a send count differs"));
        int[] bases = {CclSites.ALL_REDUCE_ONE_SHOT, CclSites.ALL_REDUCE_TWO_SHOT, CclSites.ALL_REDUCE_RING,
                CclSites.ALL_REDUCE_ATOMIC, CclSites.ALL_GATHER, CclSites.REDUCE_SCATTER, CclSites.BROADCAST,
                CclSites.ALL_TO_ALL, CclSites.ALL_TO_ALL_V};
        for (int base : bases) {
            for (int wait : new int[] {CclSites.WAIT_ARRIVE, CclSites.WAIT_DATA, CclSites.WAIT_DATA_2, CclSites.WAIT_ACK,
                    CclSites.WAIT_EXIT}) {
                assertTrue(CclSites.describe(base + wait) != null, "site " + (base + wait));
            }
        }
    }

    @Test
    void otherSitesAreNotCollectives() {
        assertNull(CclSites.describe(0));
        assertNull(CclSites.describe(1));
        assertNull(CclSites.describe(4242));
        assertNull(CclSites.describe(7105));
    }
}

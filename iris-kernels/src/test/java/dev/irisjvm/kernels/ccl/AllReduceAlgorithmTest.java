package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The automatic choice and the algorithms' properties, without a GPU. */
class AllReduceAlgorithmTest {
    private static final long CAP = 8L << 20;

    @Test
    void smallMessagesGoOneShotUpToTheLimitOfTheirWorld() {
        for (int world = 2; world <= 8; world++) {
            long limit = world <= 4 ? AllReduceAlgorithm.ONE_SHOT_LIMIT_SMALL_WORLD : AllReduceAlgorithm.ONE_SHOT_LIMIT_LARGE_WORLD;
            assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(2, world, CAP), "2 bytes, world " + world);
            assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(limit, world, CAP), "at the limit, world " + world);
            assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(limit + 1, world, CAP), "above the limit, world " + world);
            assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(512L << 20, world, CAP), "512 MiB, world " + world);
        }
    }

    @Test
    void oneShotIsNotChosenBeyondTheStagingCapacity() {
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(4096, 2, 4080));
        assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(4080, 2, 4080));
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(1, 2, 0), "no staging, no one-shot");
    }

    @Test
    void autoNeverPicksRingOrAtomic() {
        for (long bytes = 1; bytes <= (1L << 40); bytes *= 3) {
            for (int world = 2; world <= 8; world++) {
                AllReduceAlgorithm a = AllReduceAlgorithm.choose(bytes, world, CAP);
                assertTrue(a == AllReduceAlgorithm.ONE_SHOT || a == AllReduceAlgorithm.TWO_SHOT, bytes + " bytes: " + a);
                assertTrue(a.allowsInPlace(), "AUTO must stay usable in place");
            }
        }
    }

    @Test
    void kernelNamesAndInPlace() {
        assertNull(AllReduceAlgorithm.AUTO.kernelName());
        assertEquals("one_shot", AllReduceAlgorithm.ONE_SHOT.kernelName());
        assertEquals("two_shot", AllReduceAlgorithm.TWO_SHOT.kernelName());
        assertEquals("ring", AllReduceAlgorithm.RING.kernelName());
        assertEquals("atomic", AllReduceAlgorithm.ATOMIC.kernelName());
        assertTrue(AllReduceAlgorithm.ONE_SHOT.allowsInPlace());
        assertTrue(AllReduceAlgorithm.TWO_SHOT.allowsInPlace());
        assertTrue(AllReduceAlgorithm.RING.allowsInPlace());
        assertFalse(AllReduceAlgorithm.ATOMIC.allowsInPlace());
        assertEquals("sum", ReduceOp.SUM.kernelSuffix());
        assertEquals("avg", ReduceOp.AVG.kernelSuffix());
    }

    @Test
    void oneShotCapacityIsWorldSlotsOf16Bytes() {
        assertEquals(8L << 20, Collectives.oneShotCapacityBytes(2, 16L << 20));
        assertEquals((16L << 20) / 3 / 16 * 16, Collectives.oneShotCapacityBytes(3, 16L << 20));
        for (int world = 2; world <= 8; world++) {
            long staging = (16L << 20) + 256 * world;
            long cap = Collectives.oneShotCapacityBytes(world, staging);
            assertTrue(CclChecks.oneShotStagingBytes(cap, world) <= staging, "capacity fits, world " + world);
            assertTrue(CclChecks.oneShotStagingBytes(cap + 1, world) > staging, "one byte more does not, world " + world);
        }
    }
}

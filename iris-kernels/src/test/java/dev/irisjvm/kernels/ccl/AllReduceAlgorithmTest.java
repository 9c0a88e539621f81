package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The automatic choice and the algorithms' properties, without a GPU. */
class AllReduceAlgorithmTest {
    private static final long CAP = 8L << 20;
    private static final long NEVER = Long.MAX_VALUE;
    private static final long CE = 32L << 20;

    @Test
    void smallMessagesGoOneShotUpToTheLimitOfTheirWorld() {
        for (int world = 2; world <= 8; world++) {
            long limit = world <= 4 ? AllReduceAlgorithm.ONE_SHOT_LIMIT_SMALL_WORLD : AllReduceAlgorithm.ONE_SHOT_LIMIT_LARGE_WORLD;
            assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(2, world, CAP, NEVER), "2 bytes, world " + world);
            assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(limit, world, CAP, NEVER), "at the limit, world " + world);
            assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(limit + 1, world, CAP, NEVER), "above the limit, world " + world);
            assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(512L << 20, world, CAP, NEVER), "512 MiB, world " + world);
        }
    }

    @Test
    void oneShotIsNotChosenBeyondTheStagingCapacity() {
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(4096, 2, 4080, NEVER));
        assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(4080, 2, 4080, NEVER));
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(1, 2, 0, NEVER), "no staging, no one-shot");
    }

    @Test
    void copyEngineFromItsShardSize() {
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(2 * CE - 2, 2, CAP, CE), "shard 1 byte short");
        assertEquals(AllReduceAlgorithm.COPY_ENGINE, AllReduceAlgorithm.choose(2 * CE - 1, 2, CAP, CE), "shard rounded up");
        assertEquals(AllReduceAlgorithm.COPY_ENGINE, AllReduceAlgorithm.choose(1L << 30, 2, CAP, CE));
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(4 * CE - 4, 4, CAP, CE), "4 ranks: shards of a quarter");
        assertEquals(AllReduceAlgorithm.COPY_ENGINE, AllReduceAlgorithm.choose(4 * CE - 3, 4, CAP, CE), "4 ranks, rounded up");
        assertEquals(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.choose(1024, 2, CAP, 1), "one-shot first");
        assertEquals(AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.choose(1L << 30, 1, CAP, CE), "nothing to copy on one rank");
    }

    @Test
    void resolveAutoTakesCapacityAndCopyEngineNeedsFromTheStaging() {
        assertEquals(AllReduceAlgorithm.COPY_ENGINE, Collectives.resolveAuto(64L << 20, 2, 16L << 20, CE));
        assertEquals(AllReduceAlgorithm.TWO_SHOT, Collectives.resolveAuto(64L << 20, 2, 16L << 20, Collectives.Options.NEVER));
        assertEquals(AllReduceAlgorithm.TWO_SHOT, Collectives.resolveAuto(64L << 20, 2, 0, CE), "no staging, no copy engine");
        assertEquals(AllReduceAlgorithm.ONE_SHOT, Collectives.resolveAuto(1024, 2, 16L << 20, CE));
        assertEquals(AllReduceAlgorithm.ONE_SHOT, Collectives.resolveAuto(128, 2, 1, CE), "1 byte of staging rounds up to 256: 128 per rank");
        assertEquals(AllReduceAlgorithm.TWO_SHOT, Collectives.resolveAuto(1024, 2, 0, CE));
    }

    @Test
    void autoNeverPicksRingOrAtomic() {
        for (long bytes = 1; bytes <= (1L << 40); bytes *= 3) {
            for (int world = 2; world <= 8; world++) {
                AllReduceAlgorithm a = AllReduceAlgorithm.choose(bytes, world, CAP, CE);
                assertTrue(a != AllReduceAlgorithm.RING && a != AllReduceAlgorithm.ATOMIC && a != AllReduceAlgorithm.AUTO, bytes + " bytes: " + a);
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
        assertEquals("copy_engine", AllReduceAlgorithm.COPY_ENGINE.kernelName());
        assertTrue(AllReduceAlgorithm.ONE_SHOT.allowsInPlace());
        assertTrue(AllReduceAlgorithm.TWO_SHOT.allowsInPlace());
        assertTrue(AllReduceAlgorithm.RING.allowsInPlace());
        assertFalse(AllReduceAlgorithm.ATOMIC.allowsInPlace());
        assertTrue(AllReduceAlgorithm.COPY_ENGINE.allowsInPlace());
        assertEquals("sum", ReduceOp.SUM.kernelSuffix());
        assertEquals("avg", ReduceOp.AVG.kernelSuffix());
    }

    @Test
    void copyEngineChunksAreOnePeersPartOfAStagingBufferInWholeVectors() {
        assertEquals(4L << 20, CopyEngineCollectives.chunkElements(16L << 20, 2, 2), "16 MiB, 2 ranks, bf16: 8 MiB");
        assertEquals(2L << 20, CopyEngineCollectives.chunkElements(16L << 20, 2, 4), "f32: 8 MiB");
        assertEquals((16L << 20) / 3 / 16 * 4, CopyEngineCollectives.chunkElements(16L << 20, 3, 4), "whole vectors on 3 ranks");
        assertEquals(8, CopyEngineCollectives.chunkElements(32, 2, 2), "the smallest staging: one vector per rank");
        assertTrue(CopyEngineCollectives.fits(32, 2));
        assertFalse(CopyEngineCollectives.fits(31, 2));
        assertFalse(CopyEngineCollectives.fits(0, 2), "no staging, no copy engine");
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

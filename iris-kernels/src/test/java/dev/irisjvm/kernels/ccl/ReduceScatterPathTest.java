package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Where reduce-scatter switches between its paths, and how much travels with inline flags, without a GPU. */
class ReduceScatterPathTest {
    private static final long STAGING = 16L << 20;
    private static final long PUSH = ReduceScatterPath.PUSH_LIMIT_BYTES;

    @Test
    void wholeWordShardsUpToTheInlineFlagAreaGoLl() {
        for (int world = 2; world <= 8; world++) {
            long ll = Collectives.llMaxBytes(world);
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(4, world, STAGING), "one word, world " + world);
            long lastWord = ll / 4 * 4;
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(lastWord, world, STAGING), "at the limit, world " + world);
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(lastWord, world, 0), "LL needs no staging, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(lastWord + 4, world, STAGING), "above it, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(2, world, STAGING), "half a word, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(lastWord - 2, world, STAGING),
                    "not whole words, world " + world);
        }
    }

    @Test
    void inputsUpToThePushLimitGoPushWhenStagingHoldsThem() {
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(PUSH / 2, 2, STAGING), "1 MiB in on 2 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(PUSH / 2 + 2, 2, STAGING), "just above");
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(PUSH / 8, 8, STAGING), "1 MiB in on 8 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(PUSH / 8 + 16, 8, STAGING), "just above, 8 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(4L << 20, 2, STAGING), "4 MiB shards");
        long odd = Collectives.llMaxBytes(2) + 2;
        long need = CclChecks.oneShotStagingBytes(odd, 2);
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(odd, 2, need), "staging just fits");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(odd, 2, need - 256), "staging too small");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(odd, 2, 0), "no staging");
    }

    @Test
    void theInlineFlagAreaIsSplitAmongTheRanks() {
        assertEquals(256L << 10, Collectives.llMaxBytes(2));
        assertEquals(128L << 10, Collectives.llMaxBytes(4));
        assertEquals(64L << 10, Collectives.llMaxBytes(8));
        for (int world = 1; world <= 8; world++) {
            assertTrue(2 * world * (Collectives.llMaxBytes(world) / 4) * 8 <= Collectives.LL_AREA_BYTES, "world " + world);
        }
        assertTrue(Collectives.inlineFlags(AllReduceAlgorithm.ONE_SHOT, 256L << 10, 2));
        assertFalse(Collectives.inlineFlags(AllReduceAlgorithm.ONE_SHOT, (256L << 10) + 4, 2));
        assertFalse(Collectives.inlineFlags(AllReduceAlgorithm.ONE_SHOT, 256L << 10, 4));
        assertFalse(Collectives.inlineFlags(AllReduceAlgorithm.ONE_SHOT, 4098, 2), "not whole words");
        assertFalse(Collectives.inlineFlags(AllReduceAlgorithm.TWO_SHOT, 4096, 2));
    }

    @Test
    void kernelNames() {
        assertEquals("ll", ReduceScatterPath.LL.kernelName());
        assertEquals("push", ReduceScatterPath.PUSH.kernelName());
        assertEquals("pull", ReduceScatterPath.PULL.kernelName());
    }
}

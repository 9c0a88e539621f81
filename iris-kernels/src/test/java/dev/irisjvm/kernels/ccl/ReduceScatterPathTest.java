package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Where reduce-scatter switches between its paths, without a GPU. */
class ReduceScatterPathTest {
    private static final long STAGING = 16L << 20;
    private static final long LL = Collectives.LL_MAX_BYTES;
    private static final long PUSH = ReduceScatterPath.PUSH_LIMIT_BYTES;

    @Test
    void wholeWordShardsUpToTheInlineFlagAreaGoLl() {
        for (int world = 2; world <= 8; world++) {
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(4, world, STAGING), "one word, world " + world);
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(LL, world, STAGING), "at the limit, world " + world);
            assertEquals(ReduceScatterPath.LL, ReduceScatterPath.choose(LL, world, 0), "LL needs no staging, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(LL + 4, world, STAGING), "above it, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(2, world, STAGING), "half a word, world " + world);
            assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(LL - 2, world, STAGING), "not whole words, world " + world);
        }
    }

    @Test
    void inputsUpToThePushLimitGoPushWhenStagingHoldsThem() {
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(PUSH / 2, 2, STAGING), "1 MiB in on 2 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(PUSH / 2 + 2, 2, STAGING), "just above");
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(PUSH / 8, 8, STAGING), "1 MiB in on 8 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(PUSH / 8 + 16, 8, STAGING), "just above, 8 ranks");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(4L << 20, 2, STAGING), "4 MiB shards");
        long need = CclChecks.oneShotStagingBytes(LL + 2, 2);
        assertEquals(ReduceScatterPath.PUSH, ReduceScatterPath.choose(LL + 2, 2, need), "staging just fits");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(LL + 2, 2, need - 256), "staging too small");
        assertEquals(ReduceScatterPath.PULL, ReduceScatterPath.choose(LL + 2, 2, 0), "no staging");
    }

    @Test
    void kernelNames() {
        assertEquals("ll", ReduceScatterPath.LL.kernelName());
        assertEquals("push", ReduceScatterPath.PUSH.kernelName());
        assertEquals("pull", ReduceScatterPath.PULL.kernelName());
    }
}

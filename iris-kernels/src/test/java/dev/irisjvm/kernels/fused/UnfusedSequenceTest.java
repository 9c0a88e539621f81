package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import org.junit.jupiter.api.Test;

class UnfusedSequenceTest {
    /** The staging holds a one-shot all-reduce of C, or the default's (AUTO then chooses as with the default), and no more. */
    @Test
    void stagingFitsAOneShotAllReduceOfC() {
        for (int world : new int[] {1, 2, 4, 8}) {
            for (long[] mn : new long[][] {{1, 4096}, {8, 8192}, {64, 14336}, {3, 1000}}) {
                long bytes = mn[0] * mn[1] * 2;
                long staging = UnfusedSequence.stagingBytes(bytes, world);
                assertTrue(Collectives.oneShotCapacityBytes(world, staging) >= bytes, mn[0] + " x " + mn[1] + " on " + world);
                assertEquals(Collectives.resolveAuto(bytes, world, Collectives.Options.DEFAULT_STAGING_BYTES, Collectives.Options.NEVER),
                        Collectives.resolveAuto(bytes, world, staging, Collectives.Options.NEVER), mn[0] + " x " + mn[1] + " on " + world);
            }
        }
        assertEquals(AllReduceAlgorithm.ONE_SHOT, Collectives.resolveAuto(8 * 8192 * 2, 2, UnfusedSequence.stagingBytes(8 * 8192 * 2, 2),
                Collectives.Options.NEVER), "8 rows of 8192: one-shot");
        assertEquals(Collectives.Options.DEFAULT_STAGING_BYTES, UnfusedSequence.stagingBytes(256L * 28672 * 2, 2),
                "14 MiB of C: two-shot, which needs no more staging");
    }
}

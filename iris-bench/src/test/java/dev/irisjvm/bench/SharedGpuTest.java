package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class SharedGpuTest {
    @Test
    void timesOnlyWithAGpuPerRank() {
        assertNull(SharedGpu.refusal("CclSweep", 2, 1));
        assertNull(SharedGpu.refusal("GemmSweep", 1, 1));
        assertEquals("CclSweep: the 4 ranks share GPUs (up to 2 per GPU), so their kernels take turns on each GPU and a"
                + " timing would measure the turns; nothing is timed or compared. Run with one GPU per rank (the GPU"
                + " tests check correctness where ranks share a GPU: run-gpu-tests)", SharedGpu.refusal("CclSweep", 4, 2));
    }
}

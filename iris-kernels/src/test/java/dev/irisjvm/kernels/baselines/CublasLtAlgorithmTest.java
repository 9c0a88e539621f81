package dev.irisjvm.kernels.baselines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the report says about cuBLASLt's chosen algorithm, and which choices round more than once. */
class CublasLtAlgorithmTest {
    @Test
    void text() {
        assertEquals("algo 66, tile 128x256, stages 64x4, cluster 2x1x1, workspace 0 B, 0.97 waves",
                new CublasLtAlgorithm(66, "128x256", "64x4", "2x1x1", 1, "none", 0, 0, 0.97f).text());
        assertEquals("algo 21, tile 64x128, stages auto, cluster auto, split-K 4 (compute_type), swizzle 1, workspace 8 MiB, 1.94 waves",
                new CublasLtAlgorithm(21, "64x128", "auto", "auto", 4, "compute_type", 1, 8L << 20, 1.94f).text());
        assertEquals("algo 1, tile 64x64, stages 32x3, cluster 1x1x1, workspace 12 KiB, 0.50 waves",
                new CublasLtAlgorithm(1, "64x64", "32x3", "1x1x1", 1, "none", 0, 12 << 10, 0.5f).text());
    }

    @Test
    void splitKPartsAddedInTheOutputTypeRoundMoreThanOnce() {
        assertTrue(new CublasLtAlgorithm(1, "t", "s", "c", 2, "inplace", 0, 0, 1).reducesInOutputType());
        assertTrue(new CublasLtAlgorithm(1, "t", "s", "c", 3, "output_type", 0, 0, 1).reducesInOutputType());
        assertFalse(new CublasLtAlgorithm(1, "t", "s", "c", 4, "compute_type", 0, 0, 1).reducesInOutputType());
        assertFalse(new CublasLtAlgorithm(1, "t", "s", "c", 1, "inplace", 0, 0, 1).reducesInOutputType(), "no split, one rounding");
    }
}

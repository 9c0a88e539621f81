package dev.irisjvm.bench.attention;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The decode part's output check of the conventional path: within 2^-6 max |o| of the fused output, NaN never. */
class AttentionBenchCheckTest {
    private static final float[] FUSED = {0.5f, -0.25f, 0.125f};

    @Test
    void equalOutputsPass() {
        String check = AttentionBench.near(FUSED.clone(), FUSED);
        assertTrue(check.startsWith("ok: max |conventional - fused| 0.00 <= 2^-6 max |o| (max |o| 0.500, 3 elements)"), check);
    }

    /** max |o| is 0.5, so the bound is 2^-7: met exactly, then missed by one step of 2^-7. */
    @Test
    void theBoundIsRelativeToTheLargestOutput() {
        assertTrue(AttentionBench.near(new float[] {0.5f, -0.25f + 0x1p-7f, 0.125f}, FUSED).startsWith("ok"));
        String check = AttentionBench.near(new float[] {0.5f, -0.25f + 0x1p-6f, 0.125f}, FUSED);
        assertTrue(check.startsWith("FAIL: max |conventional - fused| 0.0156 > 2^-6 max |o|"), check);
    }

    @Test
    void anUnwrittenElementFails() {
        String check = AttentionBench.near(new float[] {0.5f, Float.NaN, 0.125f}, FUSED);
        assertTrue(check.startsWith("FAIL: element 1: conventional NaN, fused -0.25"), check);
    }
}

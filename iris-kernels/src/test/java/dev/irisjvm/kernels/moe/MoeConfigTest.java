package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.moe.MoeCheckAssertions.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.DType;
import org.junit.jupiter.api.Test;

/** The layer's shape, checked where it is built (no GPU). */
class MoeConfigTest {
    @Test
    void aValidConfigKeepsItsFieldsAndDefaultsToFailAndBf16() {
        MoeConfig c = MoeConfig.of(4096, 64, 2, 4096, 320);
        assertEquals(OverflowPolicy.FAIL, c.policy());
        assertEquals(DType.BF16, c.dtype());
        assertEquals(8192, c.maxRoutes());
        assertEquals(OverflowPolicy.DROP, c.withPolicy(OverflowPolicy.DROP).policy());
        assertEquals(7, c.withCapacity(7).capacity());
    }

    @Test
    void eachFieldIsCheckedAndNamed() {
        assertMessage("hidden is 100; expected a positive multiple of 8", () -> MoeConfig.of(100, 8, 2, 16, 4));
        assertMessage("hidden is 0", () -> MoeConfig.of(0, 8, 2, 16, 4));
        assertMessage("experts is 0; expected 1 to 1024", () -> MoeConfig.of(64, 0, 1, 16, 4));
        assertMessage("experts is 1025; expected 1 to 1024", () -> MoeConfig.of(64, 1025, 1, 16, 4));
        assertMessage("topK is 9; expected 1 to experts (8)", () -> MoeConfig.of(64, 8, 9, 16, 4));
        assertMessage("topK is 0", () -> MoeConfig.of(64, 8, 0, 16, 4));
        assertMessage("maxTokens is 0; expected at least 1", () -> MoeConfig.of(64, 8, 2, 0, 4));
        assertMessage("routes are int32", () -> MoeConfig.of(64, 8, 8, Integer.MAX_VALUE / 4, 4));
        assertMessage("capacity is 0; expected at least 1 row per expert", () -> MoeConfig.of(64, 8, 2, 16, 0));
        assertMessage("policy must not be null", () -> new MoeConfig(64, 8, 2, 16, 4, null, DType.BF16));
        assertMessage("dtype is F16; expected BF16", () -> new MoeConfig(64, 8, 2, 16, 4, OverflowPolicy.FAIL, DType.F16));
    }

    @Test
    void capacityForIsTheFactorTimesAnEvenShare() {
        // 4 ranks x 1000 tokens x top-2 over 64 experts: 125 routes per expert on average.
        assertEquals(125, MoeConfig.capacityFor(1.0, 1000, 2, 64, 4));
        assertEquals(157, MoeConfig.capacityFor(1.25, 1000, 2, 64, 4));  // ceil(156.25)
        assertEquals(8000 / 2, MoeConfig.capacityFor(64.0 / 2, 1000, 2, 64, 4));  // experts / topK: every route on one expert
        assertEquals(1, MoeConfig.capacityFor(1e-9, 1, 1, 1024, 1));
        assertMessage("capacityFactor is 0.0", () -> MoeConfig.capacityFor(0, 10, 1, 8, 2));
        assertMessage("capacityFactor is NaN", () -> MoeConfig.capacityFor(Double.NaN, 10, 1, 8, 2));
        assertMessage("world 0", () -> MoeConfig.capacityFor(1, 10, 1, 8, 0));
    }
}

package dev.irisjvm.kernels.moe;

import static dev.irisjvm.kernels.moe.MoeCheckAssertions.assertMessage;

import org.junit.jupiter.api.Test;

/** The checks that open both modes' create, as far as they go without a job (no GPU). */
class MoeCreateChecksTest {

    @Test
    void eachModeNamesItsCreateWhenIrisIsMissing() {
        MoeConfig c = MoeConfig.of(64, 8, 2, 16, 8);
        assertMessage("MoeDispatch.create: iris must not be null", () -> MoeCreateChecks.check(null, "MoeDispatch", c, MoeChecks::layer));
        assertMessage("MoeLowLatency.create: iris must not be null",
                () -> MoeCreateChecks.check(null, "MoeLowLatency", c, MoeChecks::lowLatencyLayer));
    }
}

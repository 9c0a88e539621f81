package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** MoE dispatch and combine on a real multi-GPU job, checked against the host reference; one dynamic test per scenario of {@link MoeScenarios}. */
@Tag("gpu")
class MoeGpuTest {
    @TestFactory
    Stream<DynamicTest> moe() {
        return new ScenarioSuite(MoeScenarios.class, MoeScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

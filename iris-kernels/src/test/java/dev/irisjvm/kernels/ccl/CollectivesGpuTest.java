package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** The collectives on a real multi-GPU job, checked against a CPU reference and NCCL; one dynamic test per scenario of {@link CollectivesScenarios}. */
@Tag("gpu")
class CollectivesGpuTest {
    @TestFactory
    Stream<DynamicTest> collectives() {
        return new ScenarioSuite(CollectivesScenarios.class, CollectivesScenarios.SCENARIOS, Duration.ofMinutes(6)).tests();
    }
}

package dev.irisjvm.core;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** The host API on a real multi-GPU job; one dynamic test per scenario of {@link CoreScenarios}. */
@Tag("gpu")
class CoreGpuTest {
    @TestFactory
    Stream<DynamicTest> scenarios() {
        return new ScenarioSuite(CoreScenarios.class, CoreScenarios.SCENARIOS, Duration.ofMinutes(6)).tests();
    }
}

package dev.irisjvm.core;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** 200 Iris init/close cycles in one process per rank leak no device memory, file descriptors or threads ({@link ResourceScenarios}). */
@Tag("gpu")
class ResourceGpuTest {
    @TestFactory
    Stream<DynamicTest> resources() {
        return new ScenarioSuite(ResourceScenarios.class, ResourceScenarios.SCENARIOS, Duration.ofMinutes(10)).tests();
    }
}

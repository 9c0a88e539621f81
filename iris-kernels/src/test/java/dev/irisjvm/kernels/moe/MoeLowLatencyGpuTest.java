package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The low-latency MoE mode on a real multi-GPU job, checked against the host reference; one dynamic
 * test per scenario of {@link MoeLowLatencyScenarios}.
 */
@Tag("gpu")
class MoeLowLatencyGpuTest {
    @TestFactory
    Stream<DynamicTest> moeLowLatency() {
        return new ScenarioSuite(MoeLowLatencyScenarios.class, MoeLowLatencyScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

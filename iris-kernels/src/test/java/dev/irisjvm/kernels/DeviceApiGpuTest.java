package dev.irisjvm.kernels;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** The device API from user kernels on a real multi-GPU job; one dynamic test per scenario of {@link DeviceApiScenarios}. */
@Tag("gpu")
class DeviceApiGpuTest {
    @TestFactory
    Stream<DynamicTest> deviceApi() {
        return new ScenarioSuite(DeviceApiScenarios.class, DeviceApiScenarios.SCENARIOS, Duration.ofMinutes(4)).tests();
    }
}

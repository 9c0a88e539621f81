package dev.irisjvm.kernels.fault;

import dev.irisjvm.core.testing.ScenarioSuite;
import dev.irisjvm.kernels.DeviceApiScenarios;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Checked mode on the device: out-of-heap and out-of-range translations are caught and raised
 * with the facts ({@link CheckedModeScenarios}), and every device-API scenario passes unchanged in
 * checked mode ({@link DeviceApiScenarios} with IRIS_CHECK=1: no false alarms).
 */
@Tag("gpu")
class CheckedModeGpuTest {
    @TestFactory
    Stream<DynamicTest> checkedMode() {
        return new ScenarioSuite(CheckedModeScenarios.class, CheckedModeScenarios.SCENARIOS, Duration.ofMinutes(4)).tests();
    }

    @TestFactory
    Stream<DynamicTest> deviceApiInCheckedMode() {
        return new ScenarioSuite(DeviceApiScenarios.class, DeviceApiScenarios.SCENARIOS, Duration.ofMinutes(6),
                Map.of("IRIS_CHECK", "1")).tests();
    }
}

package dev.irisjvm.kernels;

import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The soak ({@link SoakScenarios}): minutes of mixed RMA, barriers and collectives on every rank,
 * each result checked. Not part of the default run: tagged {@code soak} (not {@code gpu}), and it
 * runs only when asked for with {@code -Diris.soak=true} or {@code IRIS_SOAK=1}, for
 * {@code -Diris.soak.seconds} / {@code IRIS_SOAK_SECONDS} seconds (default 180). On the GPU host:
 * {@code .device/run-soak [SECONDS]} (bin/gpu-bundle).
 */
@Tag("soak")
class SoakGpuTest {
    @TestFactory
    Stream<DynamicTest> soak() {
        boolean wanted = Boolean.getBoolean("iris.soak") || "1".equals(System.getenv("IRIS_SOAK"));
        if (!wanted) {
            return Stream.of(dynamicTest("soak", () -> {
                System.out.println("soak skipped: run it with -Diris.soak=true or IRIS_SOAK=1 (.device/run-soak)");
                Assumptions.assumeTrue(false, "the soak runs only when asked for (-Diris.soak=true or IRIS_SOAK=1)");
            }));
        }
        String env = System.getenv("IRIS_SOAK_SECONDS");
        int seconds = Integer.getInteger("iris.soak.seconds",
                env != null && !env.isBlank() ? Integer.parseInt(env.trim()) : SoakScenarios.DEFAULT_SECONDS);
        return new ScenarioSuite(SoakScenarios.class, SoakScenarios.SCENARIOS, Duration.ofSeconds(seconds + 300L),
                Map.of("IRIS_SOAK_SECONDS", Integer.toString(seconds))).tests();
    }
}

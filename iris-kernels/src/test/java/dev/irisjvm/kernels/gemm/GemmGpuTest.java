package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The GEMM on every rank of the usual GPU job (each rank on its own GPU and inputs), against a CPU
 * reference and cuBLAS; one dynamic test per scenario of {@link GemmScenarios}.
 */
@Tag("gpu")
class GemmGpuTest {
    @TestFactory
    Stream<DynamicTest> gemm() {
        return new ScenarioSuite(GemmScenarios.class, GemmScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

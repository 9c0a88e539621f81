package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The fused GEMM + communication operations on a real multi-GPU job, against a double-precision CPU
 * reference and cuBLAS + NCCL; one dynamic test per scenario of {@link FusedScenarios}.
 */
@Tag("gpu")
class FusedGpuTest {
    @TestFactory
    Stream<DynamicTest> fused() {
        return new ScenarioSuite(FusedScenarios.class, FusedScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

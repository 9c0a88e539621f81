package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The MoE experts' grouped GEMM and the expert layer with combine as its epilogue on a real
 * multi-GPU job, checked against the double host reference and the unfused path; one dynamic test
 * per scenario of {@link MoeExpertGemmScenarios}.
 */
@Tag("gpu")
class MoeExpertGemmGpuTest {
    @TestFactory
    Stream<DynamicTest> moeExpertGemm() {
        return new ScenarioSuite(MoeExpertGemmScenarios.class, MoeExpertGemmScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

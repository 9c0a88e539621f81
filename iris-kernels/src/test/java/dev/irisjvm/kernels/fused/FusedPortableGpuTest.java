package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.testing.ScenarioSuite;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Every scenario of {@link FusedScenarios} with {@code IRIS_GEMM_MAINLOOP=portable} on every rank, so
 * that the operations the scenarios create run the portable kernels ({@code fused_portable.cu}) on
 * Hopper too: every operation against the CPU reference and cuBLAS + NCCL, back to back, graph
 * replay, beside held SMs, misuse (the Hopper kernels' variants, split-K and tracing refused) and
 * the timeout's wait site.
 */
@Tag("gpu")
class FusedPortableGpuTest {
    @TestFactory
    Stream<DynamicTest> fusedForcedPortable() {
        return new ScenarioSuite(FusedScenarios.class, FusedScenarios.SCENARIOS, Duration.ofMinutes(8),
                Map.of(GemmMainloop.VARIABLE, GemmMainloop.PORTABLE.toString())).tests();
    }
}

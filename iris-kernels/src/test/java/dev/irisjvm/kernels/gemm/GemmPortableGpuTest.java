package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Every scenario of {@link GemmScenarios} with {@code IRIS_GEMM_MAINLOOP=portable} on every rank, so
 * that the Gemm the scenarios create without options runs the portable mainloop on Hopper too:
 * the whole GEMM suite (tile order, stream order, graph replay, cuBLAS, misuse) on the mma.sync
 * kernels.
 */
@Tag("gpu")
class GemmPortableGpuTest {
    @TestFactory
    Stream<DynamicTest> gemmForcedPortable() {
        return new ScenarioSuite(GemmScenarios.class, GemmScenarios.SCENARIOS, Duration.ofMinutes(8),
                Map.of(GemmMainloop.VARIABLE, GemmMainloop.PORTABLE.toString())).tests();
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Attention, ring attention and distributed flash-decode on every rank of the usual GPU job,
 * against double-precision CPU references and the single-GPU kernel on gathered inputs; one dynamic
 * test per scenario of {@link AttentionScenarios}.
 */
@Tag("gpu")
class AttentionGpuTest {
    @TestFactory
    Stream<DynamicTest> attention() {
        return new ScenarioSuite(AttentionScenarios.class, AttentionScenarios.SCENARIOS, Duration.ofMinutes(8)).tests();
    }
}

package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.testing.GpuTestSupport;
import dev.irisjvm.core.testing.MultiRankJob;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/** The host API on a real multi-GPU job: one child JVM per rank, one dynamic test per scenario. */
@Tag("gpu")
class CoreGpuTest {
    private static final List<String> SCENARIOS = List.of("init_identity", "factories", "copies", "store_remote",
            "load_remote", "atomic_add", "barrier_orders_rounds", "broadcast_and_allgather", "heap_reuse",
            "graph_capture", "misuse", "device_barrier_timeout", "init_close_cycles");

    @TestFactory
    Stream<DynamicTest> scenarios() {
        GpuTestSupport.assumeGpus(2);
        int world = GpuTestSupport.worldSize();
        MultiRankJob job = MultiRankJob.run(world, Duration.ofMinutes(6), CoreScenarios.class);
        DynamicTest completed = DynamicTest.dynamicTest("job completed on " + world + " ranks", () -> {
            assertEquals(0, job.result().exitCode(), "job exit code; output tail:\n" + job.tail(60));
            assertEquals(SCENARIOS, List.copyOf(job.outcomes().keySet()), "scenarios reported");
        });
        return Stream.concat(Stream.of(completed), SCENARIOS.stream().map(name -> DynamicTest.dynamicTest(name, () -> {
            List<MultiRankJob.Outcome> outcomes = job.outcomes().getOrDefault(name, List.of());
            assertEquals(world, outcomes.size(), name + " reported by " + outcomes.size() + " of " + world
                    + " ranks; output tail:\n" + job.tail(40));
            String failures = outcomes.stream().filter(o -> !o.passed())
                    .map(o -> "rank " + o.rank() + ": " + o.detail()).collect(Collectors.joining("\n"));
            assertTrue(failures.isEmpty(), name + " failed:\n" + failures);
        })));
    }
}

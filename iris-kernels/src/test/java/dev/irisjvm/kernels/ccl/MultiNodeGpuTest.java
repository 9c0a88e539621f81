package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.testing.ScenarioSuite;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Jobs of several nodes simulated on one machine ({@link MultiNodeScenarios}): 2 nodes of 1 rank,
 * 2 of 2 and 4 of 1, the ranks sharing the machine's GPUs. Correctness only: NCCL crosses the
 * simulated nodes over loopback sockets, which says nothing about a real network's speed.
 */
@Tag("gpu")
class MultiNodeGpuTest {
    private static ScenarioSuite suite() {
        return new ScenarioSuite(MultiNodeScenarios.class, MultiNodeScenarios.SCENARIOS, Duration.ofMinutes(8));
    }

    @TestFactory
    Stream<DynamicTest> twoNodesOfOneRank() {
        return suite().onSimulatedNodes(2, 1).tests();
    }

    @TestFactory
    Stream<DynamicTest> twoNodesOfTwoRanks() {
        return suite().onSimulatedNodes(2, 2).tests();
    }

    @TestFactory
    Stream<DynamicTest> fourNodesOfOneRank() {
        return suite().onSimulatedNodes(4, 1).tests();
    }
}

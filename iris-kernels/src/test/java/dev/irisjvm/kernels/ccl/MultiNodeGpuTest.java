package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.testing.ScenarioSuite;
import dev.irisjvm.kernels.attention.NodeRingScenarios;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Jobs of several nodes simulated on one machine ({@link MultiNodeScenarios}, then ring attention
 * across the nodes, {@link NodeRingScenarios}): 2 nodes of 1 rank, 2 of 2 and 4 of 1, the ranks
 * sharing the machine's GPUs. Correctness only: NCCL crosses the simulated nodes over loopback
 * sockets, which says nothing about a real network's speed.
 */
@Tag("gpu")
class MultiNodeGpuTest {
    /** The two jobs on {@code nodes} simulated nodes of {@code ranksPerNode} ranks each. */
    private static Stream<DynamicTest> on(int nodes, int ranksPerNode) {
        ScenarioSuite collectives = new ScenarioSuite(MultiNodeScenarios.class, MultiNodeScenarios.SCENARIOS, Duration.ofMinutes(8));
        ScenarioSuite ring = new ScenarioSuite(NodeRingScenarios.class, NodeRingScenarios.SCENARIOS, Duration.ofMinutes(4));
        return Stream.concat(collectives.onSimulatedNodes(nodes, ranksPerNode).tests(),
                ring.onSimulatedNodes(nodes, ranksPerNode).tests());
    }

    @TestFactory
    Stream<DynamicTest> twoNodesOfOneRank() {
        return on(2, 1);
    }

    @TestFactory
    Stream<DynamicTest> twoNodesOfTwoRanks() {
        return on(2, 2);
    }

    @TestFactory
    Stream<DynamicTest> fourNodesOfOneRank() {
        return on(4, 1);
    }
}

package dev.irisjvm.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --simulate-nodes}: one launcher plays every node of a job on this host. */
class SimulatedNodesTest {

    private static LaunchOptions parse(String... args) {
        return LaunchOptions.parse(List.of(args), Map.of());
    }

    @Test
    void parsesIntoEveryNodeStartedHere() {
        LaunchOptions o = parse("-n", "2", "--nnodes", "2", "--simulate-nodes", "--", "./train");
        assertTrue(o.simulateNodes());
        assertEquals(4, o.worldSize());
        assertEquals(4, o.processCount());
        for (int p = 0; p < 4; p++) {
            assertEquals(p, o.globalRank(p));
            assertEquals(p / 2, o.nodeOf(p));
            assertEquals(p % 2, o.localRankOf(p));
        }
        assertEquals(o, LaunchOptions.of(2, "./train").withSimulatedNodes(2));
    }

    @Test
    void withoutSimulationProcessesAreThisNodesRanks() {
        LaunchOptions o = LaunchOptions.of(2, "x").withMasterAddr("gpu03").withMasterPort(29600).withNodes(2, 1);
        assertFalse(o.simulateNodes());
        assertEquals(2, o.processCount());
        assertEquals(3, o.globalRank(1));
        assertEquals(1, o.nodeOf(0));
        assertEquals(1, o.localRankOf(1));
    }

    @Test
    void rejectsWhatASimulationCannotUse() {
        assertEquals("--simulate-nodes needs --nnodes M with M >= 2, the number of nodes to simulate on this host, got 1",
                assertThrows(IllegalArgumentException.class, () -> parse("-n", "2", "--simulate-nodes", "--", "x"))
                        .getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("-n", "2", "--nnodes", "2", "--node-rank", "1",
                "--simulate-nodes", "--", "x")).getMessage().contains("leave out --node-rank"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("-n", "2", "--nnodes", "2", "--master-addr",
                "gpu03", "--simulate-nodes", "--", "x")).getMessage().contains("leave out --master-addr"));
        assertEquals("--simulate-nodes takes no value, got '--simulate-nodes=1'", assertThrows(IllegalArgumentException.class,
                () -> parse("-n", "2", "--nnodes", "2", "--simulate-nodes=1", "--", "x")).getMessage());
    }

    @Test
    void needsNoSharedTokenPortOrAddress() {
        LaunchOptions o = parse("-n", "1", "--nnodes", "4", "--simulate-nodes", "--", "x");
        assertEquals(0, o.masterPort(), "the launcher picks a free port");
        assertEquals(LaunchOptions.DEFAULT_MASTER_ADDR, o.masterAddr());
    }

    @Test
    void twoNodesOfTwoOnOneGpuGetNodeIdsAndAHostIdPerRank() {
        LaunchOptions o = LaunchOptions.of(2, "x").withSimulatedNodes(2).withGpus(1);
        List<Map<String, String>> envs = Launcher.rankEnvironments(o, 29600, "t", Launcher.placement(o, 0), Map.of());
        assertEquals(4, envs.size());
        for (int rank = 0; rank < 4; rank++) {
            Map<String, String> env = envs.get(rank);
            assertEquals(Integer.toString(rank), env.get("IRIS_RANK"));
            assertEquals("4", env.get("IRIS_WORLD_SIZE"));
            assertEquals(Integer.toString(rank % 2), env.get("IRIS_LOCAL_RANK"));
            assertEquals("2", env.get("IRIS_LOCAL_WORLD_SIZE"));
            assertEquals(Integer.toString(rank / 2), env.get("IRIS_NODE_RANK"));
            assertEquals("2", env.get("IRIS_NODE_COUNT"));
            assertEquals("simulated-node-" + rank / 2, env.get("IRIS_NODE_ID"));
            assertEquals("0", env.get("IRIS_DEVICE"));
            // Two ranks of one simulated node on one GPU: NCCL would refuse one host id for both.
            assertEquals("iris-shared-gpu-rank-" + rank, env.get("NCCL_HOSTID"));
            assertEquals("lo", env.get("NCCL_SOCKET_IFNAME"));
            assertEquals("1", env.get("NCCL_IB_DISABLE"));
            assertEquals("0", env.get("NCCL_NVLS_ENABLE"));
            assertEquals("t", env.get("IRIS_JOB_TOKEN"));
        }
    }

    @Test
    void nodesOfOneRankShareAHostIdPerNode() {
        LaunchOptions o = LaunchOptions.of(1, "x").withSimulatedNodes(4).withGpus(1);
        List<Map<String, String>> envs = Launcher.rankEnvironments(o, 29600, "t", Launcher.placement(o, 0), Map.of());
        assertEquals(4, envs.size());
        for (int rank = 0; rank < 4; rank++) {
            assertEquals("iris-simulated-node-" + rank, envs.get(rank).get("NCCL_HOSTID"));
            assertEquals("simulated-node-" + rank, envs.get(rank).get("IRIS_NODE_ID"));
            assertEquals("0", envs.get(rank).get("IRIS_LOCAL_RANK"));
        }
        LaunchOptions two = LaunchOptions.of(2, "x").withSimulatedNodes(2).withGpus(4);
        List<Map<String, String>> own = Launcher.rankEnvironments(two, 29600, "t", Launcher.placement(two, 0), Map.of());
        for (int rank = 0; rank < 4; rank++) {
            assertEquals(Integer.toString(rank), own.get(rank).get("IRIS_DEVICE"), "a GPU each");
            assertEquals("iris-simulated-node-" + rank / 2, own.get(rank).get("NCCL_HOSTID"));
        }
    }

    @Test
    void keepsTheCallersNcclChoices() {
        LaunchOptions o = LaunchOptions.of(1, "x").withSimulatedNodes(2).withExtraEnv(Map.of("NCCL_HOSTID", "mine"));
        List<Map<String, String>> envs = Launcher.rankEnvironments(o, 29600, "t", Launcher.placement(o, 0),
                Map.of("NCCL_SOCKET_IFNAME", "eth0"));
        assertFalse(envs.get(1).containsKey("NCCL_HOSTID"), "extraEnv's applies");
        assertFalse(envs.get(1).containsKey("NCCL_SOCKET_IFNAME"), "the inherited one applies");
        assertEquals("1", envs.get(1).get("NCCL_IB_DISABLE"));
    }

    @Test
    void aDryRunShowsEveryNodesRanks() {
        List<String> lines = new ArrayList<>();
        LaunchResult r = Launcher.run(LaunchOptions.of(1, "./train").withSimulatedNodes(2).withDryRun(true), lines::add);
        assertEquals(0, r.exitCode(), String.join("\n", lines));
        List<String> ranks = lines.stream().filter(l -> l.startsWith("[")).toList();
        assertEquals(2, ranks.size(), String.join("\n", lines));
        assertTrue(ranks.get(1).startsWith("[1] ") && ranks.get(1).contains("IRIS_NODE_ID=simulated-node-1"), ranks.get(1));
    }
}

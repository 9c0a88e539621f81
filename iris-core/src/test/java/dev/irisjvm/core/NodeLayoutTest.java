package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The nodes and teams every rank derives from the keys the ranks announce. */
class NodeLayoutTest {
    private static String[] keys(String... k) {
        return k;
    }

    private static String[] sameHost(int world) {
        String[] h = new String[world];
        Arrays.fill(h, "gpu01");
        return h;
    }

    @Test
    void oneHostIsOneNodeAndEveryTeamIsTheWorld() {
        String[] k = new String[4];
        Arrays.fill(k, "host gpu01");
        for (int r = 0; r < 4; r++) {
            NodeLayout l = NodeLayout.of(k, sameHost(4), r);
            assertEquals(1, l.nodeCount());
            assertEquals(0, l.nodeIndex());
            assertEquals(l.world().worldRanks().length, 4);
            assertArrayEquals(new int[] {0, 1, 2, 3}, l.node().worldRanks());
            assertEquals(r, l.node().index());
            assertArrayEquals(new int[] {r}, l.rail().worldRanks());
            assertEquals(r, l.world().index());
        }
    }

    @Test
    void twoNodesOfTwoGiveNodesAndRails() {
        String[] k = keys("IRIS_NODE_ID=a", "IRIS_NODE_ID=a", "IRIS_NODE_ID=b", "IRIS_NODE_ID=b");
        int[][] node = {{0, 1}, {0, 1}, {2, 3}, {2, 3}};
        int[][] rail = {{0, 2}, {1, 3}, {0, 2}, {1, 3}};
        for (int r = 0; r < 4; r++) {
            NodeLayout l = NodeLayout.of(k, sameHost(4), r);
            assertEquals(2, l.nodeCount());
            assertEquals(r / 2, l.nodeIndex());
            assertArrayEquals(node[r], l.node().worldRanks());
            assertEquals(r % 2, l.node().index());
            assertEquals("node " + r / 2, l.node().name());
            assertArrayEquals(rail[r], l.rail().worldRanks());
            assertEquals(r / 2, l.rail().index());
            assertEquals("rail " + r % 2, l.rail().name());
            assertEquals(2, l.maxNodeSize());
        }
    }

    @Test
    void fourNodesOfOneHaveOneRail() {
        String[] k = keys("launcher node 0", "launcher node 1", "launcher node 2", "launcher node 3");
        for (int r = 0; r < 4; r++) {
            NodeLayout l = NodeLayout.of(k, new String[] {"a", "b", "c", "d"}, r);
            assertEquals(4, l.nodeCount());
            assertArrayEquals(new int[] {r}, l.node().worldRanks());
            assertEquals(0, l.node().index());
            assertArrayEquals(new int[] {0, 1, 2, 3}, l.rail().worldRanks());
            assertEquals(r, l.rail().index());
            assertEquals(r, l.nodeOf(r));
        }
    }

    @Test
    void nodesNeedNotBeConsecutiveNorEqual() {
        // An MPI launch by round robin: ranks 0, 2, 4 on one host, 1 and 3 on the other.
        String[] k = keys("host x", "host y", "host x", "host y", "host x");
        String[] hosts = {"x", "y", "x", "y", "x"};
        NodeLayout four = NodeLayout.of(k, hosts, 4);
        assertArrayEquals(new int[] {0, 2, 4}, four.node().worldRanks());
        assertEquals(2, four.node().index());
        assertArrayEquals(new int[] {4}, four.rail().worldRanks(), "no rank at index 2 on the second node");
        NodeLayout three = NodeLayout.of(k, hosts, 3);
        assertEquals(1, three.nodeIndex());
        assertArrayEquals(new int[] {1, 3}, three.node().worldRanks());
        assertArrayEquals(new int[] {2, 3}, three.rail().worldRanks());
        assertEquals(1, three.rail().index());
        assertEquals(3, four.maxNodeSize());
    }

    @Test
    void oneNodeOnTwoHostsIsAnError() {
        IrisException e = assertThrows(IrisException.class, () -> NodeLayout.of(
                keys("launcher node 0", "launcher node 0"), new String[] {"a", "b"}, 1));
        assertEquals("rank 1: ranks 0 and 1 are on one node (launcher node 0) but on hosts a and b; a node's ranks"
                + " share one machine, since its symmetric heap is mapped through CUDA IPC", e.getMessage());
    }

    @Test
    void ranksMustNameTheirNodesAlike() {
        IrisException e = assertThrows(IrisException.class, () -> NodeLayout.of(
                keys("IRIS_NODE_ID=a", "host gpu01"), sameHost(2), 0));
        assertTrue(e.getMessage().startsWith("rank 0: rank 0 names its node by IRIS_NODE_ID (IRIS_NODE_ID=a), rank 1"
                + " by the host name (host gpu01); set IRIS_NODE_ID on every rank"), e.getMessage());
    }

    @Test
    void argumentsMustCoverEveryRank() {
        assertThrows(IllegalArgumentException.class, () -> NodeLayout.of(keys("host a"), new String[] {"a", "a"}, 0));
        assertThrows(IllegalArgumentException.class, () -> NodeLayout.of(keys("host a"), new String[] {"a"}, 1));
    }
}

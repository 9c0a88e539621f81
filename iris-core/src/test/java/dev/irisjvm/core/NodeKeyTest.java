package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.env.RankEnvironment;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which node a rank says it is on: an explicit id, else the launcher's node, else the host. */
class NodeKeyTest {
    private static final RankEnvironment ONE_NODE = new RankEnvironment(1, 4, 1, 4, 0, 1, "127.0.0.1", 29500, "", "IRIS");
    private static final RankEnvironment TWO_NODES = new RankEnvironment(3, 4, 1, 2, 1, 2, "gpu01", 29500, "", "Slurm");

    @Test
    void anExplicitIdWins() {
        assertEquals("IRIS_NODE_ID=sim-1", NodeKey.of(Map.of("IRIS_NODE_ID", " sim-1 "), TWO_NODES, "gpu02"));
        assertEquals("IRIS_NODE_ID=sim-1", NodeKey.of(Map.of("IRIS_NODE_ID", "sim-1"), ONE_NODE, "gpu02"));
    }

    @Test
    void aMultiNodeLauncherNamesTheNode() {
        assertEquals("launcher node 1", NodeKey.of(Map.of(), TWO_NODES, "gpu02"));
        assertEquals("launcher node 1", NodeKey.of(Map.of("IRIS_NODE_ID", "  "), TWO_NODES, "gpu02"));
    }

    @Test
    void otherwiseTheHostDoes() {
        assertEquals("host gpu02", NodeKey.of(Map.of(), ONE_NODE, "gpu02"));
    }

    @Test
    void kindsTellTheSourcesApart() {
        assertEquals("IRIS_NODE_ID", NodeKey.kind("IRIS_NODE_ID=x"));
        assertEquals("the launcher's node rank", NodeKey.kind("launcher node 3"));
        assertEquals("the host name", NodeKey.kind("host a"));
    }

    @Test
    void anIdTooLongToAnnounceIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeKey.of(Map.of("IRIS_NODE_ID", "n".repeat(60)), ONE_NODE, "h"));
        assertTrue(e.getMessage().startsWith("rank 1: IRIS_NODE_ID must be at most 51 bytes"), e.getMessage());
    }
}

package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.Team;
import org.junit.jupiter.api.Test;

/** Heap operations need peers on their node, except in a job of one rank. */
class NodeTeamOperationsTest {
    @Test
    void aNodeOfOneRankInAJobOfSeveralIsRefused() {
        Team alone = new Team("node 2", new int[] {2}, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeTeamOperations.requirePeers(alone, 4, "Collectives"));
        assertEquals("rank 2: Collectives serves the node team (the ranks one symmetric heap spans), and node 2 holds"
                + " only world ranks [2] of 4; it needs peers on its node. Across nodes use WorldCollectives, or start"
                + " at least two ranks per node", e.getMessage());
    }

    @Test
    void aNodeWithPeersOrAJobOfOneRankIsServed() {
        assertDoesNotThrow(() -> NodeTeamOperations.requirePeers(new Team("node 1", new int[] {2, 3}, 1), 4, "op"));
        assertDoesNotThrow(() -> NodeTeamOperations.requirePeers(new Team("node 0", new int[] {0}, 0), 1, "op"));
        assertDoesNotThrow(() -> NodeTeamOperations.requirePeers(new Team("node 0", new int[] {0, 1}, 0), 2, "op"));
    }
}

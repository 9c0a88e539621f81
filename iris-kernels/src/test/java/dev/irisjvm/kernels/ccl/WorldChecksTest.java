package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The world collectives need nodes of one size. */
class WorldChecksTest {
    @Test
    void nodesOfOneSizeAreServed() {
        assertDoesNotThrow(() -> WorldChecks.equalNodes(3, "WorldCollectives.create", new int[] {2, 2, 2, 2}));
        assertDoesNotThrow(() -> WorldChecks.equalNodes(0, "WorldCollectives.create", new int[] {1}));
    }

    @Test
    void nodesOfDifferentSizesAreRefusedNamingTheRank() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldChecks.equalNodes(1, "WorldCollectives.create", new int[] {3, 2, 3, 2, 3}));
        assertEquals("rank 1: WorldCollectives.create: rank 1's node holds 2 ranks, rank 0's 3; the world collectives"
                + " need the same number of ranks on every node (each rail then crosses every node)", e.getMessage());
    }

    @Test
    void blocksInWorldOrderNeedNodesOfConsecutiveRanks() {
        assertTrue(WorldChecks.consecutiveNodes(new int[] {0, 0, 1, 1}, new int[] {0, 1, 0, 1}, 2));
        assertTrue(WorldChecks.consecutiveNodes(new int[] {0, 1, 2, 3}, new int[] {0, 0, 0, 0}, 1));
        // Round robin over two hosts: ranks 0 and 2 on the first node.
        assertFalse(WorldChecks.consecutiveNodes(new int[] {0, 1, 0, 1}, new int[] {0, 0, 1, 1}, 2));
        assertDoesNotThrow(() -> WorldChecks.requireConsecutive(3, "WorldCollectives.allGather", true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldChecks.requireConsecutive(3, "WorldCollectives.allGather", false));
        assertTrue(e.getMessage().startsWith("rank 3: WorldCollectives.allGather: the nodes do not hold consecutive world"
                + " ranks"), e.getMessage());
    }
}

package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Team's rank translation and splits, checked against their definitions for every member. */
class TeamTest {
    private static final int[] NODE_ONE_OF_EIGHT = {8, 9, 10, 11, 12, 13, 14, 15};

    @Test
    void translatesBetweenTeamIndexAndWorldRank() {
        Team node = new Team("node 1", NODE_ONE_OF_EIGHT, 5);
        assertEquals(8, node.size());
        assertEquals(13, node.myWorldRank());
        for (int i = 0; i < 8; i++) {
            assertEquals(8 + i, node.worldRank(i));
            assertEquals(i, node.indexOf(8 + i));
            assertTrue(node.contains(8 + i));
        }
        assertEquals(-1, node.indexOf(7));
        assertEquals(-1, node.indexOf(16));
        assertFalse(node.contains(0));
    }

    @Test
    void splitGivesConsecutiveGroupsThatPartitionTheTeam() {
        for (int groupSize : new int[] {1, 2, 4, 8}) {
            Set<Integer> seen = new HashSet<>();
            for (int me = 0; me < 8; me++) {
                Team tp = new Team("node 1", NODE_ONE_OF_EIGHT, me).split(groupSize);
                assertEquals(groupSize, tp.size());
                assertEquals(me % groupSize, tp.index());
                assertEquals(8 + me, tp.myWorldRank());
                int first = 8 + (me / groupSize) * groupSize;
                for (int i = 0; i < groupSize; i++) {
                    assertEquals(first + i, tp.worldRank(i), "group " + groupSize + " of member " + me);
                }
                seen.add(tp.worldRank(0));
                assertEquals("node 1 / split " + groupSize + " #" + me / groupSize, tp.name());
            }
            assertEquals(8 / groupSize, seen.size(), "distinct groups of " + groupSize);
        }
    }

    @Test
    void splitAcrossHoldsTheSamePositionOfEveryGroup() {
        for (int me = 0; me < 8; me++) {
            Team node = new Team("node 1", NODE_ONE_OF_EIGHT, me);
            Team tp = node.split(4);
            Team dp = node.splitAcross(4);
            assertEquals(2, dp.size());
            assertArrayEquals(new int[] {8 + me % 4, 12 + me % 4}, dp.worldRanks());
            assertEquals(me / 4, dp.index());
            assertEquals(node.myWorldRank(), dp.myWorldRank());
            // Every tensor-parallel group holds exactly one member of each data-parallel group.
            for (int i = 0; i < tp.size(); i++) {
                assertEquals(i == tp.index(), dp.contains(tp.worldRank(i)));
            }
        }
    }

    @Test
    void translateFindsTheMemberInAnotherTeam() {
        Team node = new Team("node 0", new int[] {0, 1, 2, 3}, 2);
        Team rail = new Team("rail 2", new int[] {2, 6}, 0);
        assertEquals(0, node.translate(2, rail));
        assertEquals(-1, node.translate(1, rail));
        assertEquals(2, rail.translate(0, node));
        assertEquals(-1, rail.translate(1, node));
    }

    @Test
    void splitsRejectSizesThatDoNotDivide() {
        Team node = new Team("node 0", new int[] {0, 1, 2, 3, 4, 5}, 5);
        for (int bad : new int[] {0, -2, 4, 7}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> node.split(bad));
            assertEquals("rank 5: team node 0.split(groupSize " + bad + "): groupSize must be a positive divisor of the"
                    + " team's size 6", e.getMessage());
            assertTrue(assertThrows(IllegalArgumentException.class, () -> node.splitAcross(bad)).getMessage()
                    .contains("splitAcross(groupSize " + bad + ")"));
        }
    }

    @Test
    void worldRankRejectsAnIndexOutsideTheTeam() {
        Team node = new Team("node 1", new int[] {4, 5}, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> node.worldRank(2));
        assertEquals("rank 4: team node 1: teamIndex 2 is out of range [0, 2)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> node.worldRank(-1));
    }

    @Test
    void constructionRejectsWhatIsNotATeam() {
        assertThrows(IllegalArgumentException.class, () -> new Team("t", new int[0], 0));
        assertThrows(IllegalArgumentException.class, () -> new Team("t", new int[] {1, 2}, 2));
        assertThrows(IllegalArgumentException.class, () -> new Team("t", new int[] {1, 2}, -1));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new Team("t", new int[] {3, 1, 3}, 0))
                .getMessage().contains("distinct"));
        assertThrows(IllegalArgumentException.class, () -> new Team("t", new int[] {-1, 0}, 0));
    }

    @Test
    void isAnImmutableValue() {
        int[] ranks = {2, 3};
        Team t = new Team("node 1", ranks, 1);
        ranks[0] = 99;
        t.worldRanks()[1] = 98;
        assertArrayEquals(new int[] {2, 3}, t.worldRanks());
        assertEquals(new Team("node 1", new int[] {2, 3}, 1), t);
        assertEquals(new Team("node 1", new int[] {2, 3}, 1).hashCode(), t.hashCode());
        assertNotEquals(new Team("node 1", new int[] {2, 3}, 0), t);
        assertNotEquals(new Team("rail 1", new int[] {2, 3}, 1), t);
    }
}

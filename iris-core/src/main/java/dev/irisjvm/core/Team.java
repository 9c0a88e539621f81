package dev.irisjvm.core;

import java.util.Arrays;
import java.util.Objects;

/**
 * A group of the job's ranks as one member sees it, as NVSHMEM and NCCL teams are: the members'
 * world ranks in team order, and this rank's index among them. An immutable value; every member
 * of a team computes an equal one, except for {@link #index()}.
 *
 * <p>{@link Iris} gives the job's teams: {@link Iris#world()} (every rank), {@link Iris#node()}
 * (the ranks of this rank's node: the ranks its symmetric heap spans, and the ranks that device
 * code numbers {@code 0..ctx.world-1}) and {@link Iris#rail()} (the ranks at this rank's index on
 * every node, which NCCL connects across nodes). {@link #split} and {@link #splitAcross} carve
 * groups out of a team, such as tensor-parallel groups inside a node.
 *
 * <pre>{@code
 * // 2 nodes x 8 GPUs; this is world rank 13 (index 5 on node 1)
 * Team tp = iris.node().split(4);        // world ranks [12, 13, 14, 15], index 1
 * Team dp = iris.node().splitAcross(4);  // world ranks [9, 13], index 1
 * int peer = tp.worldRank((tp.index() + 1) % tp.size());   // 14
 * int onHeap = iris.node().indexOf(peer);                   // 6: what RemoteTile.on and ctx.rank use
 * }</pre>
 */
public final class Team {
    private final String name;
    private final int[] worldRanks;
    private final int index;

    /**
     * A team of the given world ranks (in team order, each once) as the member at {@code index}
     * sees it.
     *
     * @throws IllegalArgumentException naming the argument when the ranks are empty, negative or
     *         repeated, or the index is outside them
     */
    public Team(String name, int[] worldRanks, int index) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(worldRanks, "worldRanks");
        if (worldRanks.length == 0) {
            throw new IllegalArgumentException("team " + name + ": worldRanks must name at least one rank");
        }
        if (index < 0 || index >= worldRanks.length) {
            throw new IllegalArgumentException("team " + name + ": index " + index + " is out of range [0, "
                    + worldRanks.length + ")");
        }
        int[] sorted = worldRanks.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || (i > 0 && sorted[i] == sorted[i - 1])) {
                throw new IllegalArgumentException("team " + name + ": worldRanks must be distinct ranks >= 0, got "
                        + Arrays.toString(worldRanks));
            }
        }
        this.name = name;
        this.worldRanks = worldRanks.clone();
        this.index = index;
    }

    /** What the team is, for messages: "world", "node 1", "rail 0", "node 1 / split 4 #0". */
    public String name() {
        return name;
    }

    /** Number of members. */
    public int size() {
        return worldRanks.length;
    }

    /** This rank's index in the team, in {@code [0, size())}. */
    public int index() {
        return index;
    }

    /** This rank's world rank. */
    public int myWorldRank() {
        return worldRanks[index];
    }

    /**
     * The world rank of the member at {@code teamIndex}.
     *
     * @throws IllegalArgumentException when {@code teamIndex} is outside {@code [0, size())}
     */
    public int worldRank(int teamIndex) {
        if (teamIndex < 0 || teamIndex >= worldRanks.length) {
            throw new IllegalArgumentException("rank " + myWorldRank() + ": team " + name + ": teamIndex " + teamIndex
                    + " is out of range [0, " + worldRanks.length + ")");
        }
        return worldRanks[teamIndex];
    }

    /** The members' world ranks, in team order (a copy). */
    public int[] worldRanks() {
        return worldRanks.clone();
    }

    /** The index of world rank {@code worldRank} in this team, or -1 when it is not a member. */
    public int indexOf(int worldRank) {
        for (int i = 0; i < worldRanks.length; i++) {
            if (worldRanks[i] == worldRank) {
                return i;
            }
        }
        return -1;
    }

    /** Whether world rank {@code worldRank} is a member. */
    public boolean contains(int worldRank) {
        return indexOf(worldRank) >= 0;
    }

    /**
     * The index in {@code other} of this team's member at {@code teamIndex}, or -1 when that rank
     * is not in {@code other} (NVSHMEM's {@code nvshmem_team_translate_pe}).
     */
    public int translate(int teamIndex, Team other) {
        return other.indexOf(worldRank(teamIndex));
    }

    /**
     * The group of {@code groupSize} consecutive members that holds this rank: members
     * {@code [g * groupSize, (g + 1) * groupSize)} with {@code g = index() / groupSize}. On a node
     * of 8, {@code split(4)} gives the tensor-parallel group of 4 this rank belongs to.
     *
     * @throws IllegalArgumentException naming the rank, the team and the rule when
     *         {@code groupSize} is not a positive divisor of {@link #size()}
     */
    public Team split(int groupSize) {
        requireDivisor(groupSize, "split");
        int group = index / groupSize;
        int[] members = Arrays.copyOfRange(worldRanks, group * groupSize, (group + 1) * groupSize);
        return new Team(name + " / split " + groupSize + " #" + group, members, index % groupSize);
    }

    /**
     * The members at this rank's position inside every group of {@link #split split(groupSize)}:
     * indexes {@code j, j + groupSize, j + 2 * groupSize, ...} with {@code j = index() % groupSize}.
     * These are the data-parallel peers of a tensor-parallel split.
     *
     * @throws IllegalArgumentException as {@link #split} does
     */
    public Team splitAcross(int groupSize) {
        requireDivisor(groupSize, "splitAcross");
        int position = index % groupSize;
        int[] members = new int[worldRanks.length / groupSize];
        for (int g = 0; g < members.length; g++) {
            members[g] = worldRanks[g * groupSize + position];
        }
        return new Team(name + " / across " + groupSize + " #" + position, members, index / groupSize);
    }

    private void requireDivisor(int groupSize, String call) {
        if (groupSize < 1 || worldRanks.length % groupSize != 0) {
            throw new IllegalArgumentException("rank " + myWorldRank() + ": team " + name + "." + call + "(groupSize "
                    + groupSize + "): groupSize must be a positive divisor of the team's size " + worldRanks.length);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Team t && index == t.index && name.equals(t.name) && Arrays.equals(worldRanks, t.worldRanks);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * name.hashCode() + Arrays.hashCode(worldRanks)) + index;
    }

    @Override
    public String toString() {
        return "Team(" + name + ", world ranks " + Arrays.toString(worldRanks) + ", index " + index + ")";
    }
}

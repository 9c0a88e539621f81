package dev.irisjvm.kernels;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.Team;
import java.util.Arrays;

/**
 * The rule every heap-based operation (collectives, fused GEMMs, attention) follows: it serves
 * the node team ({@link Iris#node()}), the ranks its symmetric heap spans, and numbers them by
 * their index in it. On a job of several nodes whose node holds only this rank, such an operation
 * would exchange nothing and return this rank's own data as if it were the job's: that is refused
 * at creation, pointing at the world collectives.
 */
public final class NodeTeamOperations {
    private NodeTeamOperations() {}

    /**
     * Rejects a job whose node team has no peers for {@code operation}, when the job has other ranks
     * on other nodes (a job of one rank stays valid: its node is its world).
     *
     * @throws IllegalArgumentException naming the rank, the operation and the team
     */
    public static void requirePeers(Iris iris, String operation) {
        requirePeers(iris.node(), iris.worldSize(), operation);
    }

    static void requirePeers(Team node, int worldSize, String operation) {
        if (node.size() == 1 && worldSize > 1) {
            throw new IllegalArgumentException("rank " + node.myWorldRank() + ": " + operation + " serves the node team"
                    + " (the ranks one symmetric heap spans), and " + node.name() + " holds only world ranks "
                    + Arrays.toString(node.worldRanks()) + " of " + worldSize + "; it needs peers on its node."
                    + " Across nodes use WorldCollectives, or start at least two ranks per node");
        }
    }
}

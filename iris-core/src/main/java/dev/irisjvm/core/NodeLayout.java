package dev.irisjvm.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which node each rank of the job is on, from the keys the ranks announced at init (see
 * {@link NodeKey}), and the teams that follow from it. Nodes are numbered in the order of their
 * lowest world rank, and a node's ranks in world-rank order, so every rank computes the same layout.
 *
 * <pre>{@code
 * NodeLayout l = NodeLayout.of(new String[] {"host a", "host a", "host b", "host b"},
 *         new String[] {"a", "a", "b", "b"}, 3);
 * l.node();   // Team(node 1, world ranks [2, 3], index 1)
 * l.rail();   // Team(rail 1, world ranks [1, 3], index 1)
 * }</pre>
 */
final class NodeLayout {
    private final int rank;
    private final int[] nodeOf;           // world rank -> node
    private final int[][] nodeRanks;      // node -> its world ranks, ascending

    private NodeLayout(int rank, int[] nodeOf, int[][] nodeRanks) {
        this.rank = rank;
        this.nodeOf = nodeOf;
        this.nodeRanks = nodeRanks;
    }

    /**
     * The layout of a job whose rank {@code r} announced {@code keys[r]} and runs on {@code hosts[r]},
     * as rank {@code rank} sees it.
     *
     * @throws IrisException naming both ranks when ranks disagree on how nodes are named (one sets
     *         IRIS_NODE_ID, another does not), or when one node's ranks run on different hosts
     *         (CUDA IPC cannot map a heap across machines)
     */
    static NodeLayout of(String[] keys, String[] hosts, int rank) {
        int world = keys.length;
        if (hosts.length != world || rank < 0 || rank >= world) {
            throw new IllegalArgumentException("rank " + rank + ": " + world + " node keys, " + hosts.length
                    + " hosts; expected one of each per rank and rank in [0, " + world + ")");
        }
        Map<String, List<Integer>> byKey = new LinkedHashMap<>();
        for (int r = 0; r < world; r++) {
            if (!NodeKey.kind(keys[r]).equals(NodeKey.kind(keys[0]))) {
                throw new IrisException("rank " + rank + ": rank 0 names its node by " + NodeKey.kind(keys[0]) + " ("
                        + keys[0] + "), rank " + r + " by " + NodeKey.kind(keys[r]) + " (" + keys[r] + "); set "
                        + NodeKey.IRIS_NODE_ID + " on every rank of the job or on none");
            }
            byKey.computeIfAbsent(keys[r], k -> new ArrayList<>()).add(r);
        }
        int[] nodeOf = new int[world];
        int[][] nodeRanks = new int[byKey.size()][];
        int node = 0;
        for (List<Integer> members : byKey.values()) {
            int first = members.get(0);
            for (int r : members) {
                if (!hosts[r].equals(hosts[first])) {
                    throw new IrisException("rank " + rank + ": ranks " + first + " and " + r + " are on one node ("
                            + keys[r] + ") but on hosts " + hosts[first] + " and " + hosts[r] + "; a node's ranks share"
                            + " one machine, since its symmetric heap is mapped through CUDA IPC");
                }
                nodeOf[r] = node;
            }
            nodeRanks[node++] = members.stream().mapToInt(Integer::intValue).toArray();
        }
        return new NodeLayout(rank, nodeOf, nodeRanks);
    }

    int nodeCount() {
        return nodeRanks.length;
    }

    /** This rank's node. */
    int nodeIndex() {
        return nodeOf[rank];
    }

    /** The node of world rank {@code r}. */
    int nodeOf(int r) {
        return nodeOf[r];
    }

    Team world() {
        int[] all = new int[nodeOf.length];
        for (int r = 0; r < all.length; r++) {
            all[r] = r;
        }
        return new Team("world", all, rank);
    }

    /** The ranks of this rank's node: the ranks its heap spans. */
    Team node() {
        int[] members = nodeRanks[nodeIndex()];
        return new Team("node " + nodeIndex(), members, indexIn(members));
    }

    /**
     * The ranks at this rank's index on every node that has one, in node order: the ranks NCCL
     * connects across nodes. Where nodes differ in size, a rail skips the nodes too small for it.
     */
    Team rail() {
        int local = node().index();
        List<Integer> members = new ArrayList<>();
        for (int[] ranks : nodeRanks) {
            if (local < ranks.length) {
                members.add(ranks[local]);
            }
        }
        int[] m = members.stream().mapToInt(Integer::intValue).toArray();
        return new Team("rail " + local, m, indexIn(m));
    }

    /** The largest number of ranks on one node. */
    int maxNodeSize() {
        int max = 0;
        for (int[] ranks : nodeRanks) {
            max = Math.max(max, ranks.length);
        }
        return max;
    }

    private int indexIn(int[] members) {
        for (int i = 0; i < members.length; i++) {
            if (members[i] == rank) {
                return i;
            }
        }
        throw new IllegalStateException("rank " + rank + " is missing from its own team");
    }
}

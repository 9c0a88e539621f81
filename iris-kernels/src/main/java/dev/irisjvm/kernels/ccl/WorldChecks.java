package dev.irisjvm.kernels.ccl;

import dev.irisjvm.kernels.TensorChecks;

/**
 * What the hierarchical world collectives need of a job, checked without a GPU: every node holds
 * the same number of ranks (so that every rail crosses every node, and a rail all-reduce of node
 * shards covers the whole tensor), and, for all-gather and reduce-scatter, whose blocks are in
 * world-rank order, nodes of consecutive world ranks.
 */
final class WorldChecks {
    private WorldChecks() {}

    /**
     * @param rank         this world rank, for the message
     * @param nodeSizeOf   the size of each world rank's node
     * @throws IllegalArgumentException naming the first rank whose node differs in size from rank 0's
     */
    static void equalNodes(int rank, String call, int[] nodeSizeOf) {
        for (int r = 1; r < nodeSizeOf.length; r++) {
            if (nodeSizeOf[r] != nodeSizeOf[0]) {
                throw TensorChecks.fail(rank, call, "rank " + r + "'s node holds " + nodeSizeOf[r] + " ranks, rank 0's "
                        + nodeSizeOf[0] + "; the world collectives need the same number of ranks on every node (each rail"
                        + " then crosses every node)");
            }
        }
    }

    /**
     * Whether world rank r is rank {@code nodeIndexOf[r] * L + indexInNodeOf[r]} for every r: nodes
     * of consecutive ranks, as torchrun, srun's block distribution and bin/iris-run number them.
     */
    static boolean consecutiveNodes(int[] nodeIndexOf, int[] indexInNodeOf, int nodeSize) {
        for (int r = 0; r < nodeIndexOf.length; r++) {
            if (r != nodeIndexOf[r] * nodeSize + indexInNodeOf[r]) {
                return false;
            }
        }
        return true;
    }

    /** Rejects a call that needs nodes of consecutive ranks on a job whose ranks are spread otherwise. */
    static void requireConsecutive(int rank, String call, boolean consecutive) {
        if (!consecutive) {
            throw TensorChecks.fail(rank, call, "the nodes do not hold consecutive world ranks (node j holding ranks j L .. j L"
                    + " + L - 1), and the blocks of this collective are in world-rank order; start the ranks node by node"
                    + " (torchrun, srun's block distribution and bin/iris-run do)");
        }
    }
}

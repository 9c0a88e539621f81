package dev.irisjvm.kernels;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.Team;
import dev.irisjvm.core.gpu.Stream;

/**
 * What a GPU scenario class works with: the rank's Iris, its heap and stream, and its place in the
 * team its scenarios run over (the world, or the node for the MoE exchange, whose ranks share a heap).
 */
public abstract class TeamScenarios {
    protected final Iris iris;
    protected final SymmetricHeap heap;
    protected final Stream stream;
    /** This rank's index in the team. */
    protected final int rank;
    /** The team's size. */
    protected final int world;

    protected TeamScenarios(Iris iris, Team team) {
        this.iris = iris;
        this.heap = iris.heap();
        this.stream = iris.stream();
        this.rank = team.index();
        this.world = team.size();
    }
}

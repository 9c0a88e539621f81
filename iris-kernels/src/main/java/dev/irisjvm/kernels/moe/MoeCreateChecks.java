package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.NodeTeamOperations;
import dev.irisjvm.kernels.TensorChecks;
import java.nio.charset.StandardCharsets;

/**
 * The checks that open {@link MoeDispatch#create} and {@link MoeLowLatency#create}, before any
 * kernel is loaded or any buffer allocated: the arguments, the node, the config against the node,
 * and, collectively, that every rank passed the same config.
 */
final class MoeCreateChecks {
    private MoeCreateChecks() {}

    /** What a mode requires of its config on a node of {@code world} ranks ({@link MoeChecks#layer}, {@link MoeChecks#lowLatencyLayer}). */
    @FunctionalInterface
    interface LayerCheck {
        void check(int rank, String call, MoeConfig config, int world);
    }

    /**
     * Collective: every check of {@code owner}'s create (the class name, which starts the call's
     * messages), {@code layer} among them.
     *
     * @throws IllegalArgumentException naming the rank, the call and what was expected
     */
    static void check(Iris iris, String owner, MoeConfig config, LayerCheck layer) {
        final String call = owner + ".create";
        if (iris == null) throw new IllegalArgumentException(call + ": iris must not be null");
        int rank = iris.node().index();
        TensorChecks.notNull(rank, call, "config", config);
        NodeTeamOperations.requirePeers(iris, owner);
        layer.check(rank, call, config, iris.node().size());
        byte[][] all = iris.allGather(config.toString().getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            String theirs = new String(all[r], StandardCharsets.UTF_8);
            if (!theirs.equals(config.toString())) {
                throw TensorChecks.fail(rank, call, "rank " + r + " passed " + theirs + ", this rank " + config
                        + "; every rank must pass the same config");
            }
        }
    }
}

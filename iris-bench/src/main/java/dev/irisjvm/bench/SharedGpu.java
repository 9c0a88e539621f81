package dev.irisjvm.bench;

import dev.irisjvm.core.Iris;

/**
 * Benchmarks need a GPU per rank. Ranks that share a GPU take turns on it (the GPU time-slices
 * their contexts in steps of milliseconds), so a timing would measure the turns, not the kernels;
 * such a run reports no timing and no comparison. The GPU tests check correctness on shared GPUs.
 *
 * <pre>{@code
 * if (SharedGpu.refuses(iris, "CclSweep")) {
 *     return SharedGpu.EXIT_SHARED_GPU;   // rank 0 has said why
 * }
 * }</pre>
 */
public final class SharedGpu {
    /** Exit code of a benchmark that did not time because its ranks share a GPU. */
    public static final int EXIT_SHARED_GPU = 4;

    private SharedGpu() {}

    /** True where ranks share a GPU; rank 0 then prints why {@code bench} does not time. */
    public static boolean refuses(Iris iris, String bench) {
        String why = refusal(iris, bench);
        if (why != null && iris.rank() == 0) {
            System.err.println(why);
        }
        return why != null;
    }

    /** Why {@code bench} does not time on this job, or null where every rank has a GPU of its own. */
    public static String refusal(Iris iris, String bench) {
        return refusal(bench, iris.worldSize(), iris.maxRanksPerGpu());
    }

    static String refusal(String bench, int world, int maxRanksPerGpu) {
        if (maxRanksPerGpu <= 1) {
            return null;
        }
        return bench + ": the " + world + " ranks share GPUs (up to " + maxRanksPerGpu + " per GPU), so their kernels"
                + " take turns on each GPU and a timing would measure the turns; nothing is timed or compared. Run with"
                + " one GPU per rank (the GPU tests check correctness where ranks share a GPU: run-gpu-tests)";
    }

    /** For setups that cannot return an exit code (JMH): throws the refusal. */
    public static void requireOwnGpus(Iris iris, String bench) {
        String why = refusal(iris, bench);
        if (why != null) {
            throw new IllegalStateException(why);
        }
    }
}

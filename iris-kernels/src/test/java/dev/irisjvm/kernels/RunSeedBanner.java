package dev.irisjvm.kernels;

import dev.irisjvm.core.Iris;

/** The first line a GPU scenario class prints on each rank: who it is, and the seed that repeats its inputs. */
public final class RunSeedBanner {
    private RunSeedBanner() {}

    /** "{@code label}: rank r of w, run seed s (IRIS_TEST_SEED=s repeats these inputs)". */
    public static String of(String label, Iris iris, long runSeed) {
        return label + ": rank " + iris.rank() + " of " + iris.worldSize() + ", run seed " + runSeed + " (IRIS_TEST_SEED=" + runSeed
                + " repeats these inputs)";
    }
}

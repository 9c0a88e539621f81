package dev.irisjvm.core.testing;

import dev.irisjvm.core.Iris;

/**
 * Seeds of the GPU scenarios: one run seed for the whole job (repeatable with {@code
 * IRIS_TEST_SEED}), and seeds derived from it by name and parts, the same on every rank for the same
 * arguments, so that a rank can rebuild a peer's input for its reference.
 *
 * <pre>{@code
 * long runSeed = TestSeeds.runSeed(iris);                        // collective
 * long seed = TestSeeds.derive(runSeed, "all_reduce", n, peer);   // a case's input of rank peer
 * }</pre>
 */
public final class TestSeeds {
    /** The variable that fixes the run seed. */
    public static final String VARIABLE = "IRIS_TEST_SEED";

    private TestSeeds() {}

    /** Collective: {@code IRIS_TEST_SEED} if set, else the clock, as rank 0 has it. */
    public static long runSeed(Iris iris) {
        String fixed = System.getenv(VARIABLE);
        long proposed = fixed != null && !fixed.isBlank() ? Long.parseLong(fixed.trim()) : System.nanoTime();
        return iris.broadcast(proposed, 0);
    }

    /** The first line a GPU scenario class prints on each rank: "{@code label}: rank r of w, run seed s (IRIS_TEST_SEED=s repeats these inputs)". */
    public static String banner(String label, Iris iris, long runSeed) {
        return label + ": rank " + iris.rank() + " of " + iris.worldSize() + ", run seed " + runSeed + " (" + VARIABLE + "=" + runSeed
                + " repeats these inputs)";
    }

    /**
     * A seed from the run seed, a name and parts. Parts must not depend on the JVM: an enum's or a
     * record's hashCode() does (identity hashes), its ordinal or its toString() does not.
     */
    public static long derive(long runSeed, String what, long... parts) {
        long h = mix64(runSeed ^ what.hashCode());
        for (long p : parts) {
            h = mix64(h ^ p);
        }
        return h;
    }

    /** splitmix64's finalizer; mix64 in device_api_test.cu is the same function. */
    public static long mix64(long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}

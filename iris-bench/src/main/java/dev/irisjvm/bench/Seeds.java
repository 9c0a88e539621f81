package dev.irisjvm.bench;

/**
 * Seeds of the sweeps' random data: each point and rank draws from its own stream, derived from
 * the run's seed with SplitMix64's finalizer, so that a run repeats from its recorded seed.
 *
 * <pre>{@code
 * long seed = Seeds.point(runSeed, pointNumber, rank);   // the data rank generates at that point
 * }</pre>
 */
public final class Seeds {
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private Seeds() {}

    /** The seed of the data rank {@code owner} generates at a point: differs per run seed, point and owner. */
    public static long point(long runSeed, long pointNumber, int owner) {
        return mix(runSeed + pointNumber * GOLDEN_GAMMA + (owner + 1L) * 0xD6E8FEB86659FD93L);
    }

    /** A seed of its own for each rank. */
    public static long ofRank(long seed, int rank) {
        return mix(seed + (rank + 1L) * GOLDEN_GAMMA);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}

package dev.irisjvm.bench;

import picocli.CommandLine.Option;

/**
 * {@code --seed} of a sweep whose run chooses its seed where none is given (a picocli mixin). The
 * seed chosen becomes the option's value, so that the command the results record ({@link
 * RunRecord#command}) replays the same inputs.
 *
 * <pre>{@code
 * @Mixin SeedOption seed = new SeedOption();
 * long runSeed = seed.orClock();                        // one process: --seed, else the clock
 * long runSeed = SweepCommand.runSeed(iris, seed);      // every rank: rank 0's, broadcast
 * }</pre>
 */
public final class SeedOption {
    @Option(names = "--seed", description = "Seed of the random inputs (default: chosen and printed).")
    Long seed;

    /** The --seed given (or the run's seed once chosen), or null. */
    public Long given() {
        return seed;
    }

    /** --seed, else the clock; kept as --seed. */
    public long orClock() {
        return keep(givenOrClock());
    }

    /** --seed, else the clock, not kept: {@link SweepCommand#runSeed} keeps rank 0's instead. */
    long givenOrClock() {
        return seed != null ? seed : System.nanoTime();
    }

    /** Keeps {@code runSeed} as --seed; returns it. */
    long keep(long runSeed) {
        seed = runSeed;
        return runSeed;
    }
}

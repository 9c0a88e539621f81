package dev.irisjvm.bench;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options of a sweep that times its implementations in rounds (a picocli mixin): warm-up and
 * timed calls per implementation and round, rounds, the job's heap and device deadline ({@link
 * JobOptions}) and the seed.
 * Each sweep gives its own heap size and seed, and may change the other defaults and the fewest
 * timed calls it accepts; the defaults are the field values, which picocli shows as such.
 *
 * <pre>{@code
 * @Mixin RoundsOptions rounds = new RoundsOptions(16, 25);   // 16 GiB of heap, seed 25
 * @Mixin RoundsOptions rounds = new RoundsOptions(48, 27).calls(5, 20, 10).rounds(6).deviceTimeoutMs(30_000);
 * rounds.validate();                                          // names the option that is out of range
 * }</pre>
 */
public final class RoundsOptions {
    /** Fewest timed calls per round unless a sweep asks for more (medians of fewer are too noisy to publish). */
    public static final int MIN_REPS = 5;

    @Option(names = "--warmup", description = "Untimed calls per implementation and round (default: ${DEFAULT-VALUE}).")
    int warmup = 3;

    @Option(names = "--reps", description = "Timed calls per implementation and round, at least " + MIN_REPS
            + " or the sweep's own minimum where that is higher (default: ${DEFAULT-VALUE}).")
    int reps = 10;

    @Option(names = "--rounds", description = "Rounds, the implementations' order changing each round (default: ${DEFAULT-VALUE}).")
    int rounds = 4;

    @Mixin
    JobOptions job;

    @Option(names = "--seed", description = "Seed of the inputs (default: ${DEFAULT-VALUE}).")
    long seed;

    private int minReps = MIN_REPS;

    /** The defaults: 3 warm-up and 10 timed calls, at least {@link #MIN_REPS}, in 4 rounds, a deadline of 60 s. */
    public RoundsOptions(int heapGib, long seed) {
        this.job = new JobOptions(heapGib, 60_000);
        this.seed = seed;
    }

    /** Other defaults of warm-up and timed calls, and the fewest timed calls accepted; for the mixin's initializer. */
    public RoundsOptions calls(int warmup, int reps, int minReps) {
        this.warmup = warmup;
        this.reps = reps;
        this.minReps = minReps;
        return this;
    }

    /** Another default number of rounds; for the mixin's initializer. */
    public RoundsOptions rounds(int rounds) {
        this.rounds = rounds;
        return this;
    }

    /** Another default device deadline; for the mixin's initializer. */
    public RoundsOptions deviceTimeoutMs(long deviceTimeoutMs) {
        this.job.deviceTimeoutMs = deviceTimeoutMs;
        return this;
    }

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        require(reps >= minReps, "--reps " + reps + " is below " + minReps);
        atLeast("--warmup", warmup, 0);
        atLeast("--rounds", rounds, 1);
        job.validate();
    }

    public int warmup() {
        return warmup;
    }

    public int reps() {
        return reps;
    }

    public int rounds() {
        return rounds;
    }

    /** The heap per rank and the device deadline. */
    public JobOptions job() {
        return job;
    }

    public long seed() {
        return seed;
    }
}

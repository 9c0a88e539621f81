package dev.irisjvm.bench.step;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link StepSweep}.
 *
 * <pre>{@code
 * StepOptions o = new StepOptions();
 * new CommandLine(o).parseArgs("--shape", "2048x2048x8192", "--rounds", "2");
 * o.validate();
 * o.shape();   // 2048x2048x8192
 * }</pre>
 */
public final class StepOptions {
    /** Fewest timed steps per round (medians of fewer are too noisy to publish). */
    public static final int MIN_REPS = 5;

    @Option(names = "--out", defaultValue = "training-step.json", description = "Result JSON, written by rank 0 (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--shape", defaultValue = StepShape.DEFAULT,
            description = "TOKENSxHIDDENxFFN of the whole layer; each rank holds 1/world of the tokens and of FFN "
                    + "(default: ${DEFAULT-VALUE}, Llama-3 70B's MLP).")
    String shape;

    @Option(names = "--warmup", defaultValue = "3", description = "Untimed steps per implementation and round (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "10",
            description = "Timed steps per implementation and round, at least " + MIN_REPS + " (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--rounds", defaultValue = "4",
            description = "Rounds, the implementations' order changing each round (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--heap-gib", defaultValue = "16",
            description = "Symmetric heap per rank in GiB; the default shape needs about 4 on two ranks (default: ${DEFAULT-VALUE}).")
    int heapGib;

    @Option(names = "--device-timeout-ms", defaultValue = "60000", description = "Device wait timeout (default: ${DEFAULT-VALUE}).")
    long deviceTimeoutMs;

    @Option(names = "--seed", defaultValue = "25", description = "Seed of the inputs (default: ${DEFAULT-VALUE}).")
    long seed;

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        require(reps >= MIN_REPS, "--reps " + reps + " is below " + MIN_REPS);
        atLeast("--warmup", warmup, 0);
        atLeast("--rounds", rounds, 1);
        atLeast("--heap-gib", heapGib, 1);
        atLeast("--device-timeout-ms", deviceTimeoutMs, 1);
        shape();
    }

    StepShape shape() {
        return StepShape.parse(shape);
    }

    Path out() {
        return out;
    }

    int warmup() {
        return warmup;
    }

    int reps() {
        return reps;
    }

    int rounds() {
        return rounds;
    }

    long heapBytes() {
        return (long) heapGib << 30;
    }

    long deviceTimeoutMs() {
        return deviceTimeoutMs;
    }

    long seed() {
        return seed;
    }
}

package dev.irisjvm.bench.step;

import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.RoundsOptions;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link StepSweep}: the shape, the output, and {@link RoundsOptions}.
 *
 * <pre>{@code
 * StepOptions o = new StepOptions();
 * new CommandLine(o).parseArgs("--shape", "2048x2048x8192", "--rounds", "2");
 * o.validate();
 * o.shape();   // 2048x2048x8192
 * }</pre>
 */
public final class StepOptions {
    @Mixin
    ResultFileOption out = new ResultFileOption("training-step.json");

    @Option(names = "--shape", defaultValue = StepShape.DEFAULT,
            description = "TOKENSxHIDDENxFFN of the whole layer; each rank holds 1/world of the tokens and of FFN "
                    + "(default: ${DEFAULT-VALUE}, Llama-3 70B's MLP).")
    String shape;

    /** The default shape needs about 4 GiB of heap per rank on two ranks. */
    @Mixin
    RoundsOptions rounds = new RoundsOptions(16, 25);

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        rounds.validate();
        shape();
    }

    StepShape shape() {
        return StepShape.parse(shape);
    }

    RoundsOptions rounds() {
        return rounds;
    }
}

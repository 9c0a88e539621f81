package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.bench.moe.MoeCase;
import dev.irisjvm.bench.moe.MoeOptions;
import dev.irisjvm.bench.moe.MoeSweep;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code iris-bench moe}: what --quick stands for parses as MoeSweep's options (RankedRunsTest: what the runs share). */
class MoeRunTest {
    @Test
    void theQuickArgumentsAreValidSweepOptions() {
        // What --quick adds must be MoeSweep's own valid options, or a quick run dies at once.
        List<String> quick = ParsedRun.parse(MoeRun.class, "moe", "--quick").quickSweepArgs();
        MoeOptions o = new MoeOptions();
        new CommandLine(o).parseArgs(quick.toArray(String[]::new));
        o.validate();
        assertEquals(List.of(128, 4096, 128, 4096), o.cases().stream().map(MoeCase::tokens).toList());
        assertEquals(2, o.rounds().rounds());
        assertEquals(MoeOptions.MIN_REPS, o.rounds().reps());
        new CommandLine(new MoeSweep()).parseArgs(quick.toArray(String[]::new));
    }
}

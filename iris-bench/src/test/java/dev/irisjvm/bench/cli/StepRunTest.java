package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.bench.step.StepOptions;
import dev.irisjvm.bench.step.StepSweep;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code iris-bench step}: what --quick stands for parses as the sweep's options (RankedRunsTest: what the runs share). */
class StepRunTest {
    @Test
    void theQuickArgumentsAreValidSweepOptions() {
        // What --quick adds must be the sweep's own valid options, or a quick run dies at once.
        List<String> quick = ParsedRun.parse(StepRun.class, "step", "--quick").quickSweepArgs();
        assertEquals(List.of("--shape", "2048x2048x8192", "--rounds", "2"), quick);
        StepOptions o = new StepOptions();
        new CommandLine(o).parseArgs(quick.toArray(String[]::new));
        o.validate();
        new CommandLine(new StepSweep()).parseArgs(quick.toArray(String[]::new));
    }
}

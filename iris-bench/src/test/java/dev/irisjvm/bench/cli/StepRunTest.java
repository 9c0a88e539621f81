package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.ReportKind;
import dev.irisjvm.bench.step.StepOptions;
import dev.irisjvm.bench.step.StepSweep;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** {@code iris-bench step}: its options, that what --quick stands for parses as the sweep's, and a redraw without a GPU. */
class StepRunTest {
    @TempDir
    Path dir;

    private static StepRun parse(String... args) {
        List<String> all = new ArrayList<>(List.of("step"));
        all.addAll(List.of(args));
        ParseResult r = IrisBench.commandLine().parseArgs(all.toArray(String[]::new));
        return (StepRun) r.subcommand().commandSpec().userObject();
    }

    @Test
    void ranksQuickAndSweepOptions() {
        StepRun run = parse("-n", "2", "--quick", "--out", "/tmp/s", "--", "--reps", "20");
        assertEquals(2, run.ranks());
        assertTrue(run.options.quick);
        assertEquals("/tmp/s", run.options.out.toString());
        assertEquals(List.of("--reps", "20"), run.options.sweepArgs);
        assertEquals(ReportKind.STEP, run.kind());
        assertEquals("iris-bench step", run.name(), "the command's name, not the report's");
    }

    @Test
    void oneRankIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("-n", "1").ranks());
        assertTrue(e.getMessage().contains("-n 1: needs 2 to 8 ranks"), e.getMessage());
    }

    @Test
    void theQuickArgumentsAreValidSweepOptions() {
        // What --quick adds must be the sweep's own valid options, or a quick run dies at once.
        List<String> quick = parse("--quick").quickSweepArgs();
        assertEquals(List.of("--shape", "2048x2048x8192", "--rounds", "2"), quick);
        StepOptions o = new StepOptions();
        new CommandLine(o).parseArgs(quick.toArray(String[]::new));
        o.validate();
        new CommandLine(new StepSweep()).parseArgs(quick.toArray(String[]::new));
    }

    @Test
    void reportOnlyRedrawsWithoutAGpu() throws Exception {
        int rc = IrisBench.commandLine().execute("step", "--report-only", "--out", dir.toString());
        assertTrue(rc == 0 || rc == 3, "exit " + rc);
        assertTrue(Files.readString(dir.resolve(ReportKind.STEP.markdown())).contains("The comparison is pending a run on two GPUs"));
    }
}

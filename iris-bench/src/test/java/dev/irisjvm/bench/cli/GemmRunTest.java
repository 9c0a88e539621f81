package dev.irisjvm.bench.cli;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.ReportKind;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code iris-bench gemm}'s options: which suite goes to the sweep and which report the run writes. */
class GemmRunTest {
    private static GemmRun parse(String... args) {
        GemmRun run = new GemmRun();
        new CommandLine(run).setUnmatchedOptionsArePositionalParams(true).parseArgs(args);
        return run;
    }

    @Test
    void theModelsSuiteWritesTheSuiteReport() {
        GemmRun models = parse("--suite", "models", "--reps", "30");
        assertEquals(ReportKind.GEMM_SUITE, models.kind());
        assertEquals(List.of("--suite", "models"), models.beforeSweep(Path.of("/tmp")));
        assertEquals(List.of("--reps", "30"), models.options.sweepArgs, "the rest still goes to the sweep");
        assertEquals("iris-bench gemm", models.name());
        assertEquals(0, models.ranks());
    }

    @Test
    void theHeadlineSuiteIsTheDefault() {
        for (GemmRun headline : List.of(parse(), parse("--suite", "HEADLINE"), parse("--quick"))) {
            assertEquals(ReportKind.GEMM, headline.kind());
            assertEquals(List.of(), headline.beforeSweep(Path.of("/tmp")), "the sweep's default, leaving room for --quick's --shapes");
            assertEquals(0, headline.ranks());
        }
    }

    @Test
    void badUsage() {
        IllegalArgumentException quick = assertThrows(IllegalArgumentException.class, () -> parse("--quick", "--suite", "models").ranks());
        assertTrue(quick.getMessage().contains("does not go with --suite models"), quick.getMessage());
        CommandLine.ParameterException e = assertThrows(CommandLine.ParameterException.class, () -> parse("--suite", "llama"));
        assertTrue(e.getMessage().contains("--suite 'llama' is not headline or models"), e.getMessage());
    }

    @Test
    void helpDocumentsTheSuites() {
        String help = ParsedRun.help("gemm");
        assertContains(help, "--suite=NAME", "--suite models: issue 26's suite of 117 shapes", "gemm-suite.md");
    }
}

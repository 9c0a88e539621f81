package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the runs of one rank per GPU on this host share: -n, --quick, --out and the sweep's own
 * options after {@code --} parse, and fewer than two ranks are refused.
 */
class RankedRunsTest {
    @ParameterizedTest
    @CsvSource({"moe, MOE, --models, mixtral", "step, STEP, --reps, 20", "fused, FUSED, --reps, 50", "ccl, CCL, --ops, all_reduce",
            "rma, RMA, --ops, load"})
    void ranksQuickOutAndSweepOptions(String command, ReportKind kind, String option, String value) {
        BenchRun run = ParsedRun.parse(BenchRun.class, command, "-n", "2", "--quick", "--out", "/tmp/r", "--", option, value);
        assertEquals(2, run.ranks());
        assertTrue(run.options.quick);
        assertEquals("/tmp/r", run.options.out.dir.toString());
        assertEquals(List.of(option, value), run.options.sweepArgs);
        assertEquals(kind, run.kind());
        assertEquals("iris-bench " + command, run.name(), "the command's name, not the report's");
    }

    @ParameterizedTest
    @ValueSource(strings = {"moe", "step", "fused", "ccl", "rma"})
    void oneRankIsRefused(String command) {
        BenchRun run = ParsedRun.parse(BenchRun.class, command, "-n", "1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, run::ranks);
        assertTrue(e.getMessage().contains("-n 1: needs 2 to 8 ranks"), e.getMessage());
    }
}

package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.moe.MoeCase;
import dev.irisjvm.bench.moe.MoeOptions;
import dev.irisjvm.bench.moe.MoeSweep;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** {@code iris-bench moe}: its options, and that what --quick and the sweep options stand for parse as MoeSweep's. */
class MoeRunTest {
    private static MoeRun parse(String... args) {
        List<String> all = new ArrayList<>(List.of("moe"));
        all.addAll(List.of(args));
        ParseResult r = IrisBench.commandLine().parseArgs(all.toArray(String[]::new));
        return (MoeRun) r.subcommand().commandSpec().userObject();
    }

    @Test
    void ranksQuickAndSweepOptions() {
        MoeRun run = parse("-n", "2", "--quick", "--out", "/tmp/m", "--", "--models", "mixtral");
        assertEquals(2, run.ranks());
        assertTrue(run.options.quick);
        assertEquals("/tmp/m", run.options.out.toString());
        assertEquals(List.of("--models", "mixtral"), run.options.sweepArgs);
    }

    @Test
    void oneRankIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("-n", "1").ranks());
        assertTrue(e.getMessage().contains("-n 1: needs 2 to 8 ranks"), e.getMessage());
    }

    @Test
    void theQuickArgumentsAreValidSweepOptions() {
        // What --quick adds must be MoeSweep's own valid options, or a quick run dies at once.
        List<String> quick = parse("--quick").quickSweepArgs();
        MoeOptions o = new MoeOptions();
        new CommandLine(o).parseArgs(quick.toArray(String[]::new));
        o.validate();
        assertEquals(List.of(128, 4096, 128, 4096), o.cases().stream().map(MoeCase::tokens).toList());
        assertEquals(2, o.rounds());
        assertEquals(MoeOptions.MIN_REPS, o.reps());
        new CommandLine(new MoeSweep()).parseArgs(quick.toArray(String[]::new));
    }
}

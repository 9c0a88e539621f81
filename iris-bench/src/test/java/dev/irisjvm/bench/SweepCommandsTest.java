package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.attention.AttentionBench;
import dev.irisjvm.bench.ccl.CclSweep;
import dev.irisjvm.bench.fused.FusedSweep;
import dev.irisjvm.bench.gemm.GemmSweep;
import dev.irisjvm.bench.jit.JitBench;
import dev.irisjvm.bench.moe.MoeSweep;
import dev.irisjvm.bench.nodes.NodesSweep;
import dev.irisjvm.bench.report.ReportKind;
import dev.irisjvm.bench.rma.RmaSweep;
import dev.irisjvm.bench.step.StepSweep;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * What every sweep's command line does alike: its JSON by default is the file its report reads, and
 * a bad option ends the run with the usage exit code and a message that names it, before any GPU
 * work (so these run without a GPU).
 */
class SweepCommandsTest {
    static Stream<Arguments> sweeps() {
        return Stream.of(
                Arguments.of(ReportKind.RMA, (Supplier<SweepCommand>) RmaSweep::new, "--reps", "0", "--reps must be >= 1, got 0"),
                Arguments.of(ReportKind.CCL, (Supplier<SweepCommand>) CclSweep::new, "--warmup", "0", "--warmup must be >= 1"),
                Arguments.of(ReportKind.ATTENTION, (Supplier<SweepCommand>) AttentionBench::new, "--reps", "2",
                        "--reps must be >= 3, got 2"),
                Arguments.of(ReportKind.GEMM, (Supplier<SweepCommand>) GemmSweep::new, "--reps", "5", "--reps must be >= 20, got 5"),
                Arguments.of(ReportKind.FUSED, (Supplier<SweepCommand>) FusedSweep::new, "--reps", "5", "--reps 5 is below 20"),
                Arguments.of(ReportKind.MOE, (Supplier<SweepCommand>) MoeSweep::new, "--warmup", "-1", "--warmup must be >= 0, got -1"),
                Arguments.of(ReportKind.STEP, (Supplier<SweepCommand>) StepSweep::new, "--reps", "2", "--reps 2 is below 5"),
                Arguments.of(ReportKind.NODES, (Supplier<SweepCommand>) NodesSweep::new, "--reps", "4", "--reps 4 is below 5"),
                Arguments.of(ReportKind.JIT, (Supplier<SweepCommand>) JitBench::new, "--cold-reps", "2",
                        "--cold-reps must be >= 3, got 2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sweeps")
    void theDefaultJsonIsTheOneTheReportReads(ReportKind kind, Supplier<SweepCommand> sweep, String option, String value,
            String message) {
        CommandLine cl = new CommandLine(sweep.get());
        cl.parseArgs();
        assertEquals(Path.of(kind.sweepFile()), cl.getCommandSpec().findOption("--out").getValue());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sweeps")
    void aBadOptionExitsWithTheUsageCodeAndNamesIt(ReportKind kind, Supplier<SweepCommand> sweep, String option, String value,
            String message) {
        CommandLine cl = new CommandLine(sweep.get());
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = cl.execute(option, value);
        } finally {
            System.setErr(stderr);
        }
        assertEquals(SweepCommand.EXIT_USAGE, exit);
        String said = err.toString(StandardCharsets.UTF_8);
        assertTrue(said.startsWith(cl.getCommandName() + ": ") && said.contains(message), said);
    }
}

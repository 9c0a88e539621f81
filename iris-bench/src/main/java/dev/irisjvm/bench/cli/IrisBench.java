package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.StatusReport;
import dev.irisjvm.bench.report.TraceTimeline;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The benchmarks' one command line ({@code bin/iris-bench}): each benchmark from sweep to report,
 * a report redrawn from its JSON, README's status section, a trace drawn as a timeline (where
 * java.desktop is).
 *
 * <pre>
 * bin/iris-bench gemm --quick
 * bin/iris-bench ccl -n 2 --out docs/benchmarks -- --ops all_reduce
 * bin/iris-bench moe -n 2                     # MoE dispatch and combine against NCCL all-to-all-v
 * bin/iris-bench step -n 2                    # a training step, fused against cuBLAS then NCCL
 * bin/iris-bench nodes --nodes 2 -n 1         # world collectives on simulated nodes, two levels against flat NCCL
 * bin/iris-bench report fused                 # redraw docs/benchmarks/fused.md from its JSON
 * bin/iris-bench status --check
 * </pre>
 */
@Command(name = "iris-bench", mixinStandardHelpOptions = true,
        subcommands = {GemmRun.class, CclRun.class, FusedRun.class, AttentionRun.class, RmaRun.class, JitRun.class, MoeRun.class,
                StepRun.class, NodesRun.class, ReportCommand.class, StatusReport.class},
        description = "Benchmarks of Iris for the JVM against cuBLAS, NCCL and PyTorch, measured in the same run, "
                + "and their reports (docs/benchmarks). Pass/fail targets: docs/benchmarks/targets.json.")
public final class IrisBench {
    private IrisBench() {}

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, with input errors reported in one line rather than a stack trace. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(IrisBench.class);
        // The timeline draws with java.awt: a runtime without java.desktop (the GPU bundle's) cannot even load it.
        if (ModuleLayer.boot().findModule("java.desktop").isPresent()) {
            cl.addSubcommand(new TraceTimeline());
        }
        return cl.setUnmatchedOptionsArePositionalParams(true)
                .setExecutionExceptionHandler((e, line, parsed) -> {
                    line.getErr().println(line.getCommandName() + ": " + e.getMessage());
                    return 1;
                });
    }
}

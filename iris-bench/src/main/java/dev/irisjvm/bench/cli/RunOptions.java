package dev.irisjvm.bench.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The options every benchmark command has: where the report goes, a quick run, a redraw, and the sweep's own options. */
final class RunOptions {
    @Mixin
    ReportFolderOption out = new ReportFolderOption();

    @Option(names = "--quick", description = "a smaller run for a smoke test (what it keeps: the command's description)")
    boolean quick;

    @Option(names = "--report-only", description = "redraw the report from the raw JSON already in DIR (no GPU needed)")
    boolean reportOnly;

    @Parameters(paramLabel = "SWEEP_ARGS", description = "anything else goes to the sweep, e.g. --reps 50 (after -- if it clashes)")
    List<String> sweepArgs = new ArrayList<>();
}

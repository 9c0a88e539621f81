package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Mixin;

/**
 * A sweep over sizes on the host's GPUs ({@code -n}) followed by JMH benchmarks with a size
 * parameter ({@code --jmh-args}), as {@code ccl} and {@code rma} run: --quick stands for sizes up
 * to 16 MiB and 5 repetitions in the sweep, and the smaller sizes in JMH.
 */
abstract class SizeSweepRun extends RankedRun {
    @Mixin
    JmhOptions jmh = new JmhOptions();

    private final String jmhBenchmarks;
    private final String jmhQuickParams;

    /**
     * @param jmhBenchmarks  the JMH benchmarks, a regular expression
     * @param jmhQuickParams the JMH parameters of a --quick run ({@code -p} value)
     */
    SizeSweepRun(ReportKind kind, String sweepMain, String jmhBenchmarks, String jmhQuickParams) {
        super(kind, sweepMain, List.of("--max-bytes", "16777216", "--reps", "5"));
        this.jmhBenchmarks = jmhBenchmarks;
        this.jmhQuickParams = jmhQuickParams;
    }

    @Override
    String jmhBenchmarks() {
        return jmhBenchmarks;
    }

    @Override
    List<String> jmhArgs() {
        return jmh.args(options.quick, jmhQuickParams);
    }
}

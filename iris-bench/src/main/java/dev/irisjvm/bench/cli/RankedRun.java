package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Mixin;

/** A run of one rank per GPU of this host ({@code -n}), at least two: the sweeps that compare ranks' work. */
abstract class RankedRun extends BenchRun {
    @Mixin
    RankCount rankCount = new RankCount();

    RankedRun(ReportKind kind, String sweepMain, List<String> quickSweepArgs) {
        super(kind, sweepMain, quickSweepArgs);
    }

    @Override
    final int ranks() {
        return rankCount.resolve(2);
    }
}

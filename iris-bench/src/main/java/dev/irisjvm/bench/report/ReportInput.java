package dev.irisjvm.bench.report;

import java.nio.file.Path;
import java.util.List;

/**
 * What one report is rendered from.
 *
 * @param out        the report's folder; the raw files are copied into it
 * @param sweep      the run's JSON (a SweepResult, GemmSweepResult, FusedSweepResult, AttentionBenchResult,
 *                   JitBenchResult, MoeSweepResult, StepSweepResult or NodesSweepResult); null for a kind whose report
 *                   stands without one ({@link ReportKind#runOptional()})
 * @param jmh        JMH result files, one per rank (ccl, fused, rma; ignored by the others)
 * @param traces     folder of a fused sweep's Chrome traces, or null for the sweep JSON's folder
 * @param runCommand the command that ran everything, for the header, or null
 * @param jmhCommand the command that produced the JMH files, or null
 * @param findings   hand-written Markdown placed after the targets, or null
 * @param targets    the targets to judge by
 */
public record ReportInput(ReportKind kind, Path out, Path sweep, List<Path> jmh, Path traces, String runCommand,
                          String jmhCommand, Path findings, BenchmarkTargets targets) {
    public ReportInput {
        jmh = List.copyOf(jmh);
    }
}

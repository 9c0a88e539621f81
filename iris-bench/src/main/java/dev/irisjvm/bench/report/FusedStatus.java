package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.FusedDocument.Row;
import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The README's status item for the fused kernels, from one fused sweep, judged as {@code fused.md}
 * judges it: per operation and shape, the fastest fused variant whose output check passed, speedup =
 * cuBLAS-then-NCCL median ÷ fused median, against {@link BenchmarkTargets.Fused}.
 *
 * <pre>{@code
 * String item = new FusedStatus(source, StoredResult.read(path, FusedSweepResult.class), targets).item("docs/benchmarks");
 * }</pre>
 */
record FusedStatus(RunSource source, FusedSweepResult sweep, BenchmarkTargets targets) {

    String item(String linkBase) {
        List<Row> rows = new FusedDocument(sweep, Document.Context.of(targets)).rows();
        List<Double> all = new ArrayList<>();
        List<Double> met = new ArrayList<>();
        List<String> missed = new ArrayList<>();
        List<String> notMeasured = new ArrayList<>();
        Tally tally = new Tally();
        for (Row r : rows) {
            double speedup = r.speedup(r.best());
            if (Double.isNaN(speedup)) {
                notMeasured.add(point(r));
                continue;
            }
            all.add(speedup);
            if (!Double.isNaN(r.target())) {
                if (tally.judge(speedup >= r.target())) {
                    met.add(speedup);
                } else {
                    missed.add(point(r) + " (" + RatioRange.ratio(speedup) + "×, target " + Sizes.ratio(r.target()) + ")");
                }
            }
        }
        StringBuilder sb = new StringBuilder("- fused GEMM + all-scatter / all-reduce / reduce-scatter and all-gather + GEMM (")
                .append(StatusSection.link(linkBase, FusedDocument.MARKDOWN))
                .append("), the fastest fused variant whose output check passed against cuBLAS then NCCL in the same run")
                .append(strongestBaselines(rows) ? " (the faster of `cublasGemmEx` and cuBLASLt, then the faster of NCCL on plain and "
                        + "on window-registered buffers): " : " (`cublasGemmEx`'s default algorithm, then NCCL on plain buffers: the "
                        + "run predates the cuBLASLt and window-registered baselines, pending a two-GPU run): ");
        sb.append(RatioRange.of(all).map(RatioRange::text).orElse("nothing timed")).append(" over ").append(all.size())
                .append(all.size() == 1 ? " operation and shape" : " operation and shape pairs");
        commonShape(rows).ifPresent(shape -> sb.append(" (").append(shape).append(')'));
        sb.append("; targets met on ").append(met.size()).append(" of ").append(tally.judged())
                .append(RatioRange.of(met).map(r -> " (" + r.text() + ")").orElse(""));
        if (!missed.isEmpty()) {
            sb.append(", missed on ").append(CclStatus.join(missed));
        }
        if (!notMeasured.isEmpty()) {
            sb.append("; not measured: ").append(CclStatus.join(notMeasured));
        }
        long failedChecks = sweep.measurements().stream().filter(FusedMeasurement::checkFailed).count();
        if (failedChecks > 0) {
            sb.append("; ").append(failedChecks).append(" output check(s) failed");
        }
        return sb.append(" (").append(source.cite(linkBase)).append(");\n").toString();
    }

    private static boolean strongestBaselines(List<Row> rows) {
        return FusedDocument.withCublasLt(rows) && rows.stream().anyMatch(r -> Row.timed(r.baselineWindow()));
    }

    /**
     * The range at the shape most operations share, e.g. "1.249–1.341× at 8192 × 8192 × 8192, all 4
     * operations": one shape run by every operation is the like-for-like comparison between them.
     */
    private static Optional<String> commonShape(List<Row> rows) {
        Map<String, List<Double>> byShape = new LinkedHashMap<>();
        for (Row r : rows) {
            double speedup = r.speedup(r.best());
            if (!Double.isNaN(speedup)) {
                byShape.computeIfAbsent(r.shape(), s -> new ArrayList<>()).add(speedup);
            }
        }
        return byShape.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .max(Comparator.comparingInt(e -> e.getValue().size()))
                .flatMap(e -> RatioRange.of(e.getValue()).map(r -> r.text() + " at " + FusedDocument.label(e.getKey()) + ", "
                        + e.getValue().size() + " operations"));
    }

    private static String point(Row r) {
        return FusedDocument.title(r.op()) + " at " + FusedDocument.label(r.shape());
    }
}

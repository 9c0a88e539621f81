package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.CclFigures.Figure;
import dev.irisjvm.bench.report.TargetResult.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import dev.irisjvm.bench.rma.SizeList;

/**
 * The collectives' performance targets, judged from one run's data against NCCL measured in the
 * same run, at each size the fastest of NCCL's ways the run measured ({@link CclFigures#BASELINES},
 * {@link CclFigures#baseline}), in the target's timing mode: back to back, or one call from Java
 * ({@code oneCall}, targets A and B: issue 29 judges small collectives as a training step issues
 * them). Every ratio is "how many times faster
 * than NCCL": NCCL's time ÷ iris's time, which at equal bytes is also iris's bus bandwidth ÷ NCCL's. A target is judged at every size of its range
 * that the sweep has: it passes when every one of them passes; it fails when one measured size
 * fails or an iris output there failed its check; it is "not measured" when the range has no size,
 * or NCCL (or iris) has no figure at some size and nothing failed. No figure is ever assumed.
 *
 * The targets themselves (A to F: ranges, bounds, which settings they are stated for) are data:
 * {@code targets.json}, read by {@link BenchmarkTargets}.
 *
 * <p>All-reduce is judged by {@code iris_auto}, the algorithm a caller gets by default; the detail
 * table also shows the fastest iris algorithm at each size, which is what AUTO could reach. Sizes
 * that the sweep rounded down to a multiple of the world size (less than 64 bytes off) count as
 * their nominal size.
 *
 * <pre>{@code
 * CclTargets t = CclTargets.evaluate(new CclFigures(sweep.measurements(), 2), CclSettings.fromCommand(sweep.command()),
 *         BenchmarkTargets.builtIn().collectives());
 * String md = t.section();
 * }</pre>
 */
public final class CclTargets {
    /** Rounding of sizes to whole elements per rank loses less than this (8 ranks x 4-byte elements). */
    static final long ROUNDING_SLACK = 64;

    /**
     * One target, as {@code targets.json} states it ({@link BenchmarkTargets#collectives()}).
     *
     * @param from     smallest size of the range (a size with a binary suffix: 4k, 8m)
     * @param to       largest size of the range, or null for no upper end
     * @param minRatio the bound: NCCL's time ÷ iris's time at least this
     * @param latency  stated as latency (else as bus bandwidth; the ratio is the same at equal bytes)
     * @param oneCall  judged on one call from Java, launch to completion ({@link CclFigures#CALL}), as a
     *                 training step issues it, rather than on calls back to back
     */
    public record Spec(String id, String op, boolean graph, String from, String to, double minRatio, String what,
                       boolean latency, boolean bf16Only, boolean sumOnly, boolean oneCall) {
        String iris() {
            return CclFigures.defaultIris(op) + suffix();
        }

        String nccl() {
            return CclFigures.NCCL + suffix();
        }

        String suffix() {
            return CclFigures.suffix(graph, oneCall);
        }

        long lo() {
            return SizeList.parse(from);
        }

        long hi() {
            return to == null ? Long.MAX_VALUE : SizeList.parse(to);
        }

        boolean contains(long bytes) {
            return bytes + ROUNDING_SLACK >= lo() && bytes <= hi();
        }

        String range() {
            return to == null ? "≥ " + Sizes.bytes(lo()) : Sizes.bytes(lo()) + " – " + Sizes.bytes(hi());
        }
    }

    /**
     * One size of one target.
     *
     * @param baseline the NCCL implementation {@code nccl} is the figure of (the faster one), or null where there is none
     */
    public record Row(Spec spec, long bytes, Optional<Figure> iris, String baseline, Optional<Figure> nccl, double ratio,
                      Status status, String note, String bestAlgorithm, double bestRatio) {}

    private final List<TargetResult> results;
    private final List<Row> rows;
    private final CclSettings settings;
    private final int world;

    private CclTargets(List<TargetResult> results, List<Row> rows, CclSettings settings, int world) {
        this.results = List.copyOf(results);
        this.rows = List.copyOf(rows);
        this.settings = settings;
        this.world = world;
    }

    public List<TargetResult> results() {
        return results;
    }

    public List<Row> rows() {
        return rows;
    }

    public static CclTargets evaluate(CclFigures figures, CclSettings settings, List<Spec> specs) {
        List<TargetResult> results = new ArrayList<>();
        List<Row> rows = new ArrayList<>();
        for (Spec spec : specs) {
            results.add(evaluate(figures, settings, spec, rows));
        }
        return new CclTargets(results, rows, settings, figures.world());
    }

    static TargetResult evaluate(CclFigures figures, CclSettings settings, Spec spec, List<Row> rows) {
        String bound = (spec.latency() ? "NCCL time ÷ iris time ≥ " : "iris bus GB/s ÷ NCCL bus GB/s ≥ ")
                + Sizes.number(spec.minRatio());
        String target = spec.what() + ", " + spec.range() + (spec.bf16Only() ? " (bf16)" : "");
        if (spec.bf16Only() && !settings.dtype().equals("bf16")) {
            return TargetResult.notMeasured(spec.id(), target, bound, "the sweep ran " + settings.dtype() + "; the target is stated for bf16");
        }
        if (spec.sumOnly() && !settings.reduceOp().equals("sum")) {
            return TargetResult.notMeasured(spec.id(), target, bound, "the sweep reduced with " + settings.reduceOp()
                    + "; the target is stated for sum");
        }
        if (!settings.nccl()) {
            return TargetResult.notMeasured(spec.id(), target, bound, "the sweep ran with --no-nccl");
        }
        if (spec.oneCall() && !figures.measured(spec.op(), spec.iris())) {
            return TargetResult.notMeasured(spec.id(), target, bound, "the run timed no " + spec.iris() + " (one call from Java, launch "
                    + "to completion: a sweep from before --one-call-max-bytes, or run with it at 0)");
        }
        List<Long> sizes = figures.sizes(spec.op()).stream().filter(spec::contains).toList();
        if (sizes.isEmpty()) {
            return TargetResult.notMeasured(spec.id(), target, bound, "no " + spec.op() + " size in " + spec.range() + " in the sweep");
        }
        int measured = 0;
        int failed = 0;
        List<String> missing = new ArrayList<>();
        double worst = Double.NaN;
        long worstBytes = -1;
        Row worstRow = null;
        for (long bytes : sizes) {
            Optional<Figure> iris = figures.figure(spec.op(), spec.iris(), bytes);
            Optional<CclFigures.Baseline> fastestNccl = figures.baseline(spec.op(), spec.graph(), spec.oneCall(), bytes);
            Optional<Figure> nccl = fastestNccl.map(CclFigures.Baseline::figure);
            String baseline = fastestNccl.map(CclFigures.Baseline::impl).orElse(null);
            String best = null;
            double bestRatio = Double.NaN;
            if (spec.op().equals("all_reduce")) {
                List<String> algorithms = new ArrayList<>();
                for (String a : CclFigures.ALL_REDUCE_ALGORITHMS) {
                    algorithms.add(a + spec.suffix());
                }
                Optional<String> fastest = figures.fastest(spec.op(), algorithms, bytes);
                if (fastest.isPresent()) {
                    best = CclFigures.eagerOf(fastest.get());
                    Figure f = figures.figure(spec.op(), fastest.get(), bytes).orElseThrow();
                    bestRatio = nccl.map(n -> n.us() / f.us()).orElse(Double.NaN);
                }
            }
            Row row;
            if (iris.isEmpty() && figures.failed(spec.op(), spec.iris(), bytes)) {
                failed++;
                row = new Row(spec, bytes, iris, baseline, nccl, Double.NaN, Status.FAIL, spec.iris() + " failed its check (or did not run)",
                        best, bestRatio);
            } else if (iris.isEmpty() || nccl.isEmpty()) {
                missing.add(CclFigures.sizeLabel(bytes));
                String why = iris.isEmpty() ? "no " + spec.iris() + " figure" : (figures.failed(spec.op(), spec.nccl(), bytes)
                        ? spec.nccl() + " failed its check" : "no " + spec.nccl() + " figure");
                row = new Row(spec, bytes, iris, baseline, nccl, Double.NaN, Status.NOT_MEASURED, why, best, bestRatio);
            } else {
                measured++;
                double ratio = nccl.get().us() / iris.get().us();
                boolean pass = ratio >= spec.minRatio();
                if (!pass) {
                    failed++;
                }
                String failedBaselines = CclFigures.baselineImpls(spec.graph(), spec.oneCall()).stream().skip(1)
                        .filter(b -> figures.failed(spec.op(), b, bytes)).collect(Collectors.joining(" and "));
                String note = failedBaselines.isEmpty() ? "" : failedBaselines + " failed its check; judged against " + baseline;
                row = new Row(spec, bytes, iris, baseline, nccl, ratio, pass ? Status.PASS : Status.FAIL, note, best, bestRatio);
                if (Double.isNaN(worst) || ratio < worst) {
                    worst = ratio;
                    worstBytes = bytes;
                    worstRow = row;
                }
            }
            rows.add(row);
        }
        List<String> baselines = CclFigures.baselineImpls(spec.graph(), spec.oneCall()).stream()
                .filter(b -> figures.measured(spec.op(), b)).toList();
        boolean several = baselines.size() > 1;
        String against = several ? (baselines.size() == 2 ? "the faster of " : "the fastest of ") + CclStatus.join(baselines) : spec.nccl();
        String source = spec.iris() + " vs " + against + ", " + measured + " of " + sizes.size() + " size(s) in range measured ("
                + CclFigures.sizeLabel(sizes.get(0)) + (sizes.size() > 1 ? " … " + CclFigures.sizeLabel(sizes.get(sizes.size() - 1)) : "") + ")"
                + (missing.isEmpty() ? "" : "; not measured at " + String.join(", ", missing));
        if (measured == 0 && failed == 0) {
            return TargetResult.notMeasured(spec.id(), target, bound, source);
        }
        String measuredText = worstRow == null ? "iris output failed its check"
                : "worst " + Sizes.ratio3(worst) + " at " + CclFigures.sizeLabel(worstBytes) + " (iris " + Sizes.number(worstRow.iris().get().us())
                        + " µs, NCCL " + Sizes.number(worstRow.nccl().get().us()) + " µs" + (several ? " " + worstRow.baseline() : "") + ")";
        Status status = failed > 0 ? Status.FAIL : missing.isEmpty() ? Status.PASS : Status.NOT_MEASURED;
        return new TargetResult(spec.id(), target, bound, measuredText, worst, status, source);
    }

    /** The Targets section: the verdicts, then every size each verdict rests on. */
    public String section() {
        StringBuilder sb = new StringBuilder("## Targets\n\n");
        sb.append("Judged from this run only, against NCCL in the same run: at each size the fastest of NCCL on plain buffers "
                + "(`nccl`), on window-registered symmetric buffers (`nccl_window`) and, for all-gather and broadcast, as one group "
                + "of sends and receives moving the same bytes (`nccl_p2p`), among those the run measured (column \"baseline\"). "
                + "Targets marked one call are judged on a single call from Java, launch to completion (`_call`), as a training "
                + "step issues it");
        if (world != 2) {
            sb.append(" (the targets are stated for two H200s; this run has ").append(world).append(" ranks)");
        }
        sb.append(". Ratio = NCCL's time ÷ iris's time = iris's bus bandwidth ÷ NCCL's (> 1: iris is faster); "
                + "times are the slowest rank's median per call. A target passes when every size of its range passes.\n\n");
        MarkdownTable t = new MarkdownTable("target", "what", "bound", "measured", "worst ratio", "status", "from");
        for (TargetResult r : results) {
            t.row(r.id(), r.target(), r.bound(), r.measured(), Sizes.ratio3(r.ratio()), r.status().text(), r.source());
        }
        sb.append(t.render()).append('\n');
        if (!rows.isEmpty()) {
            MarkdownTable d = new MarkdownTable("target", "size", "iris", "iris µs", "iris bus GB/s", "baseline", "NCCL µs",
                    "NCCL bus GB/s", "ratio", "status", "fastest iris algorithm (ratio)");
            for (Row r : rows) {
                d.row(r.spec().id(), CclFigures.sizeLabel(r.bytes()), r.spec().iris(),
                        r.iris().map(f -> Sizes.number(f.us())).orElse("—"), r.iris().map(f -> Sizes.number(f.busGbps())).orElse("—"),
                        r.baseline() == null ? "—" : r.baseline(), r.nccl().map(f -> Sizes.number(f.us())).orElse("—"), r.nccl().map(f -> Sizes.number(f.busGbps())).orElse("—"),
                        Sizes.ratio3(r.ratio()), r.status().text() + (r.note().isEmpty() ? "" : " (" + r.note() + ")"),
                        r.bestAlgorithm() == null ? "—" : r.bestAlgorithm() + " (" + Sizes.ratio3(r.bestRatio()) + ")");
            }
            sb.append("Per size:\n\n").append(d.render()).append('\n');
        }
        sb.append("Settings of this run: ").append(settings.dtype()).append(", reduce op ").append(settings.reduceOp())
                .append(", ").append(settings.eagerCalls()).append(settings.eagerCalls() == 1 ? " call" : " calls")
                .append(" per timed eager repetition, ").append(settings.graphCalls()).append(" calls per captured graph.\n\n");
        return sb.toString();
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.Collectors;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;

/**
 * Writes {@value #MARKDOWN}, its chart ({@value #SPEEDUP_PNG}) and one timeline picture per traced
 * call ({@code fused-trace-<op>-<variant>.png}, from the Chrome traces next to it) from one fused
 * sweep ({@link dev.irisjvm.bench.fused.FusedSweep}): per operation and shape, the floors (the GEMM
 * alone with cuBLAS, and the bytes one rank sends at {@value #NVLINK_GBPS} GB/s), each fused
 * variant, cuBLAS then NCCL, the speedup against issue 9's target ({@link BenchmarkTargets.Fused}), and what
 * the AUTO rule picks against what measured best. Only what the sweep measured is shown; a missing
 * figure is a dash, never borrowed from another run.
 *
 * <pre>{@code
 * List<String> chartErrors = new FusedDocument(sweep, context).write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class FusedDocument extends Document {
    public static final String MARKDOWN = "fused.md";
    public static final String SPEEDUP_PNG = "fused-speedup.png";
    /**
     * NVLink bandwidth one rank's SMs reach storing into a peer: 370 GB/s, the SM-driven remote
     * store at 1 GiB measured on the same machines (docs/benchmarks/rma.md).
     */
    public static final double NVLINK_GBPS = 370;
    /** The largest M of issue 26's small-M table ({@code FusedSweep --small-m}). */
    static final int SMALL_M_ROWS = 256;

    private final FusedSweepResult sweep;
    private final BenchmarkTargets.Fused target;

    /** One operation at one shape: every implementation's measurement. */
    record Row(String op, String shape, int m, Map<String, FusedMeasurement> fused, FusedMeasurement baseline,
               FusedMeasurement baselineWindow, FusedMeasurement baselineIris, FusedMeasurement cublas, FusedMeasurement cublasLt, FusedMeasurement irisGemm,
               FusedMeasurement nccl, FusedMeasurement irisCcl, double target) {
        FusedMeasurement any() {
            for (FusedMeasurement m : fused.values()) return m;
            return baseline != null ? baseline : cublas;
        }

        /** The faster GEMM alone of cublasGemmEx and cuBLASLt (whose check passed), or null. */
        FusedMeasurement vendorGemm() {
            boolean lt = timed(cublasLt) && !cublasLt.checkFailed();
            if (!timed(cublas)) {
                return lt ? cublasLt : null;
            }
            return lt && cublasLt.medianUs() < cublas.medianUs() ? cublasLt : cublas;
        }

        /** Whether the ranks could not split this shape (nothing ran). */
        boolean unsplittable() {
            FusedMeasurement m = any();
            return m != null && m.unsplittable();
        }

        static boolean timed(FusedMeasurement m) {
            return m != null && m.reps() > 0 && m.medianUs() > 0;
        }

        /** The fastest timed fused variant whose output check did not fail, or null. */
        FusedMeasurement best() {
            FusedMeasurement best = null;
            for (FusedMeasurement m : fused.values()) {
                if (timed(m) && !m.checkFailed() && (best == null || m.medianUs() < best.medianUs())) best = m;
            }
            return best;
        }

        FusedMeasurement auto() {
            return fused.values().stream().filter(FusedMeasurement::auto).findFirst().orElse(null);
        }

        /** Over the GEMM then NCCL: {@link #ncclBaseline()}'s time ÷ {@code m}'s. */
        double speedup(FusedMeasurement m) {
            return speedup(m, ncclBaseline());
        }

        /**
         * The GEMM then NCCL, the faster of NCCL on plain buffers and on its window-registered ones
         * where that was timed and its check passed (issue 29: the strongest baseline).
         */
        FusedMeasurement ncclBaseline() {
            boolean window = timed(baselineWindow) && !baselineWindow.checkFailed();
            if (!timed(baseline)) {
                return window ? baselineWindow : baseline;
            }
            return window && baselineWindow.medianUs() < baseline.medianUs() ? baselineWindow : baseline;
        }

        /** {@code over}'s time ÷ {@code m}'s, NaN unless both were timed. */
        static double speedup(FusedMeasurement m, FusedMeasurement over) {
            return timed(m) && timed(over) ? over.medianUs() / m.medianUs() : Double.NaN;
        }

        /** max(GEMM alone, NVLink bytes at NVLINK_GBPS), in µs; NaN without the GEMM. */
        double floorUs() {
            FusedMeasurement gemm = vendorGemm();
            return gemm != null ? Math.max(gemm.medianUs(), nvlinkUs()) : Double.NaN;
        }

        double nvlinkUs() {
            FusedMeasurement m = any();
            return m == null ? Double.NaN : m.nvlinkBytes() / (NVLINK_GBPS * 1e3);
        }
    }

    public FusedDocument(FusedSweepResult sweep, Context context) {
        super(ReportKind.FUSED, context);
        this.sweep = sweep;
        this.target = context.targets().fused();
    }

    /** The shapes in sweep order. */
    List<Row> rows() {
        Map<String, List<FusedMeasurement>> byShape = new LinkedHashMap<>();
        for (FusedMeasurement m : sweep.measurements()) {
            byShape.computeIfAbsent(m.op() + " " + m.shape(), key -> new ArrayList<>()).add(m);
        }
        List<Row> rows = new ArrayList<>();
        for (var e : byShape.entrySet()) {
            Map<String, FusedMeasurement> fused = new LinkedHashMap<>();
            Map<String, FusedMeasurement> other = new LinkedHashMap<>();
            for (FusedMeasurement m : e.getValue()) {
                if (FusedMeasurement.FUSED.equals(m.impl())) {
                    fused.put(m.variant().isEmpty() ? "?" : m.variant(), m);
                } else {
                    other.put(m.impl(), m);
                }
            }
            FusedMeasurement first = e.getValue().get(0);
            rows.add(new Row(first.op(), first.shape(), first.m(), fused, other.get(FusedMeasurement.BASELINE),
                    other.get(FusedMeasurement.BASELINE_WINDOW), other.get(FusedMeasurement.BASELINE_IRIS), other.get(FusedMeasurement.CUBLAS), other.get(FusedMeasurement.CUBLASLT),
                    other.get(FusedMeasurement.IRIS_GEMM), other.get(FusedMeasurement.NCCL), other.get(FusedMeasurement.IRIS_CCL),
                    target.speedup(first.op(), first.shape())));
        }
        return rows;
    }

    /** The Markdown, the chart and the timelines. */
    @Override
    String markdown(Charts charts) {
        List<Row> rows = rows();
        return header(rows) + targets(rows) + smallM(rows) + findings + chart(rows, charts) + times(rows) + timelines(charts)
                + auto(rows) + jmhSection() + method(rows) + checks(rows);
    }

    // ---- sections ----------------------------------------------------------------------------------

    private String header(List<Row> rows) {
        return new ReportHeader("Fused GEMM + communication benchmarks", "The fused kernels of `dev.irisjvm.kernels.fused` "
                + "(`GemmAllScatter`, `GemmAllReduce`, `GemmReduceScatter`, `AllGatherGemm`: one persistent wgmma/TMA kernel that "
                + "computes the tiles and moves them to the other ranks over the symmetric heap) against cuBLAS then NCCL in "
                + "sequence on the same inputs, measured in the same run, one process per GPU.", sweep)
                .item("ranks", sweep.worldSize() + " (tensor parallelism " + sweep.worldSize() + "; shapes are the layer's global M × N × K)")
                .item("data", "BF16 in and out, F32 accumulation; inputs uniform in [-1, 1), generated on the GPU; B stored N × K "
                        + "(a Linear layer's weight)")
                .item("points", rows.size() + " (operation × shape), " + sweep.warmup() + " warm-up and " + sweep.reps()
                        + " timed calls per implementation")
                .item("baseline", baselineText(rows))
                .end(context, sweep.command());
    }

    private static String baselineText(List<Row> rows) {
        boolean lt = withCublasLt(rows);
        boolean iris = rows.stream().anyMatch(r -> r.baselineIris() != null);
        boolean windows = rows.stream().anyMatch(r -> Row.timed(r.baselineWindow()));
        if (!lt && !iris && !windows) {
            return "cuBLAS (`cublasGemmEx`, default algorithm, no workspace) then NCCL on plain buffers, on one "
                    + "stream. Not in this run, though issue 29 asks for them: cuBLASLt with its heuristic's best algorithm and a "
                    + "workspace (the GEMM report's stronger baseline), and NCCL on window-registered buffers. The speedups are "
                    + "against the baseline above until a two-GPU run measures those.";
        }
        String gemm = lt ? "per shape, the faster of `cublasGemmEx` (default algorithm) and cuBLASLt (its heuristic's algorithm, with "
                + "the workspace the software line names), both timed alone in this run, then NCCL"
                : "cuBLAS (`cublasGemmEx`, default algorithm, no workspace) then NCCL";
        return gemm + (windows ? ", the faster per shape of NCCL on plain buffers and on window-registered ones "
                + "(`ncclCommWindowRegister`, NCCL's symmetric kernels; the GEMM writes into NCCL's input window)" : " on plain buffers")
                + ", on one stream" + (iris ? "; and the same GEMM then the library's own collective (`Collectives`; all-reduce with "
                + "AUTO, the one-shot kernel up to its capacity)" : "") + "." + (windows ? "" : " Not in this run, though issue 29 asks "
                + "for it: NCCL on window-registered buffers.") + (lt ? "" : " Not in this run either: cuBLASLt.");
    }

    private String targets(List<Row> rows) {
        MarkdownTable t = new MarkdownTable("operation", "M × N × K", "target", "best fused µs (variant)", "cuBLAS → NCCL µs",
                "speedup", "status", "AUTO picks", "AUTO speedup", "output check");
        Tally tally = new Tally();
        for (Row r : rows) {
            FusedMeasurement best = r.best();
            FusedMeasurement auto = r.auto();
            double speedup = r.speedup(best);
            double target = r.target();
            String status;
            if (Double.isNaN(target)) {
                status = "no target";
            } else if (Double.isNaN(speedup)) {
                status = "not measured";
            } else {
                status = tally.judge(speedup >= target) ? "PASS" : "**FAIL**";
            }
            String checks = r.fused().values().stream().map(m -> m.variant() + ": " + (m.check().isEmpty() ? "—" : m.check()))
                    .collect(Collectors.joining("; "));
            t.row(title(r.op()), label(r.shape()), Double.isNaN(target) ? null : "≥ " + Sizes.ratio(target),
                    usWithVariant(best),
                    Row.timed(r.ncclBaseline()) ? Sizes.number(r.ncclBaseline().medianUs()) : null, Sizes.ratio3(speedup), status,
                    auto == null ? null : auto.variant(), Sizes.ratio3(r.speedup(auto)), checks);
        }
        String world = sweep.worldSize() == target.world() ? ""
                : " The targets are stated for " + target.world() + " ranks; this run had " + sweep.worldSize() + ".";
        String summary = tally.summary("targets met", "No target could be judged in this run.");
        return "## Targets\n\n" + GemmDocument.capitalized(target.source()) + ": speedup of the fused kernel over cuBLAS then NCCL in sequence (both measured in this run), "
                + "speedup = baseline median ÷ fused median, judged on the fastest variant whose output check passed. "
                + summary + world + "\n\n" + t.renderOrNone()
                + "\nSpeedups to three decimals" + nearMiss(rows) + ".\n\n";
    }

    /**
     * The rounding note's example, from the first target the table states (targets.json's, as
     * every target here), so that the note names a target the reader sees above it; none where no
     * row has a target.
     */
    private static String nearMiss(List<Row> rows) {
        OptionalDouble first = rows.stream().mapToDouble(Row::target).filter(t -> !Double.isNaN(t)).findFirst();
        if (first.isEmpty()) {
            return "";
        }
        double t = first.getAsDouble();
        return ", so that " + Sizes.justUnder(t, "0.001") + " does not read as a passing " + Sizes.twoDecimals(t);
    }

    /**
     * Issue 26's small-M table: every shape of up to {@value #SMALL_M_ROWS} rows, against both
     * baselines, judged at M up to the targets' maxM.
     */
    private String smallM(List<Row> rows) {
        List<Row> shown = rows.stream().filter(r -> r.m() <= SMALL_M_ROWS).toList();
        BenchmarkTargets.SmallM goal = target.smallM();
        if (shown.isEmpty() || goal == null) {
            return "";
        }
        boolean oneRank = sweep.worldSize() < 2;
        MarkdownTable t = new MarkdownTable("operation", "M × N × K", "best fused µs (variant)", "cuBLAS → NCCL µs", "speedup",
                "cuBLAS → Iris µs", "speedup", "target", "status", "GEMM alone µs", "fused ÷ GEMM alone", "Iris GEMM µs",
                "NCCL alone µs", "Iris collective µs");
        Tally tally = new Tally();
        for (Row r : shown) {
            FusedMeasurement best = r.best();
            double overNccl = r.speedup(best);
            double overIris = Row.speedup(best, r.baselineIris());
            String status;
            if (r.unsplittable()) {
                status = "not run: " + r.any().check().substring(FusedMeasurement.UNSPLITTABLE.length());
            } else if (!goal.judges(r.m())) {
                status = "no target";
            } else if (oneRank) {
                status = "one rank: not judged";
            } else if (Double.isNaN(overNccl) || Double.isNaN(overIris)) {
                status = "not measured";
            } else {
                status = tally.judge(overNccl >= goal.minOverNccl() && overIris >= goal.minOverIris()) ? "PASS" : "**FAIL**";
            }
            FusedMeasurement gemm = r.vendorGemm();
            t.row(title(r.op()), label(r.shape()), usWithVariant(best), us(r.ncclBaseline()), Sizes.ratio3(overNccl), us(r.baselineIris()),
                    Sizes.ratio3(overIris),
                    goal.judges(r.m()) ? "≥ " + Sizes.ratio(goal.minOverNccl()) + " / ≥ " + Sizes.ratio(goal.minOverIris()) : null,
                    status, gemm == null ? null : Sizes.number(gemm.medianUs()) + " (" + gemm.impl() + ")",
                    best == null || gemm == null ? null : Sizes.ratio(best.medianUs() / gemm.medianUs()), us(r.irisGemm()),
                    us(r.nccl()), usWithVariant(r.irisCcl()));
        }
        String summary = oneRank ? "This run had one rank: the collectives moved nothing, so no target is judged; the table "
                + "shows the fused kernels' GEMM part against the GEMM alone (\"fused ÷ GEMM alone\"), the single-GPU part of the table."
                : tally.summary("targets met", "No small-M target could be judged in this run.");
        return "## Small M\n\n" + GemmDocument.capitalized(goal.source()) + ": at M up to " + goal.maxM() + ", the fused kernel at "
                + "least " + Sizes.ratio(goal.minOverNccl()) + " as fast as cuBLAS then NCCL and " + Sizes.ratio(goal.minOverIris())
                + " as fast as cuBLAS then the library's own collective (the target column gives both), both measured in this "
                + "run; judged on the fastest fused variant whose output check passed. " + summary + " \"GEMM alone\" is the "
                + "faster of cublasGemmEx and cuBLASLt, the GEMM both baselines run. Reduce-scatter and all-gather + GEMM split "
                + "the rows over the ranks in whole 128-row tiles, so below 128 × the ranks they do not run.\n\n" + t.render() + "\n";
    }

    private static String chart(List<Row> rows, Charts charts) {
        List<Row> shown = rows.stream().filter(r -> Row.timed(r.ncclBaseline())).toList();
        if (shown.isEmpty()) {
            return "";
        }
        return "## Chart\n\n" + charts.link(SPEEDUP_PNG,
                "speedup of each fused variant over cuBLAS then NCCL, with the target and the floor's bound",
                () -> drawSpeedups(shown, charts.file(SPEEDUP_PNG)));
    }

    private static void drawSpeedups(List<Row> shown, Path png) throws Exception {
        CategoryChart chart = new CategoryChartBuilder().width(1200).height(620)
                .title("Speedup over cuBLAS then NCCL (higher is better)").xAxisTitle("operation, global M × N × K")
                .yAxisTitle("baseline time ÷ time").build();
        chart.getStyler().setLegendPosition(LegendPosition.OutsideS);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisLabelRotation(20);
        List<String> labels = shown.stream().map(r -> r.op() + " " + r.shape()).toList();
        // Two series: the variant whose epilogue stores to peers and the spare-warp variant.
        chart.addSeries("fused: epilogue stores to peers", labels,
                shown.stream().map(r -> (Number) zero(r.speedup(epilogueVariant(r)))).toList());
        chart.addSeries("fused: spare warps", labels, shown.stream().map(r -> (Number) zero(r.speedup(r.fused().get("spare_warps"))))
                .toList());
        chart.addSeries("target", labels, shown.stream().map(r -> (Number) zero(r.target())).toList());
        chart.addSeries("bound: baseline ÷ max(GEMM alone, NVLink bytes at " + Sizes.number(NVLINK_GBPS) + " GB/s)", labels,
                shown.stream().map(r -> (Number) zero(r.ncclBaseline().medianUs() / r.floorUs())).toList());
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapFormat.PNG);
    }

    private String times(List<Row> rows) {
        MarkdownTable t = new MarkdownTable("operation", "M × N × K", "GEMM alone (cuBLAS) µs", "NVLink bytes per rank",
                "NVLink floor µs", "fused: epilogue stores µs", "fused: spare warps µs", "cuBLAS → NCCL µs", "NCCL alone µs",
                "Iris GEMM alone µs", "best fused ÷ floor");
        for (Row r : rows) {
            FusedMeasurement epilogue = epilogueVariant(r);
            FusedMeasurement spare = r.fused().get("spare_warps");
            FusedMeasurement best = r.best();
            FusedMeasurement any = r.any();
            FusedMeasurement gemm = r.vendorGemm();
            t.row(title(r.op()), label(r.shape()), gemm == null ? null : Sizes.number(gemm.medianUs())
                            + (FusedMeasurement.CUBLASLT.equals(gemm.impl()) ? " (cuBLASLt)" : ""),
                    any == null ? null : Sizes.bytes((long) any.nvlinkBytes()),
                    Sizes.number(r.nvlinkUs()), usWithSpeedup(r, epilogue), usWithSpeedup(r, spare), us(r.ncclBaseline()), us(r.nccl()),
                    us(r.irisGemm()), best == null || Double.isNaN(r.floorUs()) ? null : Sizes.ratio(best.medianUs() / r.floorUs()));
        }
        return "## Times and floors\n\nMedian time per call; per repetition the slowest rank counts. The floor of a fused call is "
                + "max(the rank's GEMM alone with cuBLAS" + (withCublasLt(rows) ? " (the faster of cublasGemmEx and cuBLASLt)" : "") + ", the bytes one rank sends ÷ " + Sizes.number(NVLINK_GBPS) + " GB/s, the "
                + "SM-driven NVLink store bandwidth of [rma.md](rma.md)). Fused columns show the time and, in parentheses, the "
                + "speedup over cuBLAS → NCCL; \"epilogue stores\" is the variant `epilogue` (all-scatter's runs before 2026-12-03 "
                + "name it `sequential`; all-gather + GEMM has only the spare-warp variant).\n\n" + t.renderOrNone()
                + "\n";
    }

    private String timelines(Charts charts) {
        List<FusedSweepResult.Trace> traces = sweep.traces() == null ? List.of() : sweep.traces();
        if (traces.isEmpty()) {
            return "## Tile timelines\n\nNo traced runs in this sweep.\n\n";
        }
        StringBuilder sb = new StringBuilder("## Tile timelines\n\nOne traced call per operation and variant (the `_traced` kernels, "
                + "`FusedConfig.withTracing(true)`), at the operation's first shape: one row per SM and role, each tile's mainloop "
                + "and epilogue and the spare warps' copies, from `%globaltimer`, each rank from its first record. The Chrome / "
                + "Perfetto traces open in ui.perfetto.dev. \"Hidden\" is the share of communication time (spare-warp copies, and "
                + "epilogues that store to peers) during which some SM was computing.\n\n");
        MarkdownTable t = new MarkdownTable("operation", "variant", "rank", "span µs", "compute busy µs", "communication busy µs",
                "hidden", "records (mainloop / epilogue / copy)", "trace");
        Map<String, String> pictures = new LinkedHashMap<>();
        for (FusedSweepResult.Trace tr : traces) {
            String png = tr.file().replaceAll("\\.json$", "") + ".png";
            String stored = ChromeTrace.storedName(tr.file());
            Path json = charts.file(stored);
            boolean drawn = false;
            if (Files.exists(json)) {
                drawn = charts.draw(png, () -> TraceTimeline.draw(json, charts.file(png), title(tr.op()) + " "
                        + label(tr.shape()) + ", " + tr.variant() + " (" + sweep.worldSize() + " ranks)"));
            } else {
                charts.notDrawn(png, stored + " is not in " + json.getParent());
            }
            pictures.putIfAbsent(tr.op(), null);
            if (drawn && pictures.get(tr.op()) == null) {
                pictures.put(tr.op(), "![" + title(tr.op()) + " " + tr.variant() + " timeline](" + png + ")");
            }
            for (FusedSweepResult.RankSummary s : tr.ranks()) {
                t.row(title(tr.op()), tr.variant(), s.rank(), Sizes.number(s.spanUs()), Sizes.number(s.computeUs()),
                        Sizes.number(s.communicationUs()), Double.isNaN(s.hiddenFraction()) ? null
                                : String.format(Locale.ROOT, "%.0f%%", 100 * s.hiddenFraction()),
                        s.computeEvents() + " / " + s.epilogueEvents() + " / " + s.copyEvents(),
                        "[json.gz](" + stored + ")" + (drawn ? ", [png](" + png + ")" : ""));
            }
        }
        for (var p : pictures.entrySet()) {
            sb.append("### ").append(title(p.getKey())).append("\n\n")
                    .append(p.getValue() == null ? "Timeline not drawn (see the chart errors of the report command).\n\n" : p.getValue() + "\n\n");
        }
        return sb.append(t.render()).append('\n').toString();
    }

    private String auto(List<Row> rows) {
        MarkdownTable t = new MarkdownTable("operation", "M × N × K", "fastest variant", "AUTO picks", "AUTO ÷ fastest");
        int agree = 0;
        int judged = 0;
        for (Row r : rows) {
            FusedMeasurement best = r.best();
            FusedMeasurement auto = r.auto();
            if (best == null || r.fused().size() < 2) {
                continue;
            }
            judged++;
            boolean same = auto != null && auto.variant().equals(best.variant());
            agree += same ? 1 : 0;
            t.row(title(r.op()), label(r.shape()), best.variant(), auto == null ? null : auto.variant(),
                    auto == null || !Row.timed(auto) ? null : Sizes.ratio3(auto.medianUs() / best.medianUs()));
        }
        if (judged == 0) {
            return "";
        }
        return "## The AUTO rule\n\n`FusedVariant.choose`, the rule behind `FusedVariant.AUTO`, picks the fastest measured variant "
                + "at " + agree + " of " + judged + " shapes with more than one variant. "
                + "A time ratio above 1 is what AUTO costs there.\n\n" + t.render() + "\n";
    }

    /** FusedBenchmark: the call plus synchronize, per call, on the slowest rank, fused against the baseline. */
    private String jmhSection() {
        List<JmhResult> fused = context.jmh().stream().filter(r -> r.className().equals("FusedBenchmark")).toList();
        if (fused.isEmpty() && context.jmhProblems().isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("## JMH: the host's view\n\n`FusedBenchmark` inside every rank: one call plus "
                + "`iris.synchronize()`, SingleShotTime batches, the ranks aligned before every iteration; µs per call (median over "
                + "iterations), the slowest rank. The AUTO variant against cuBLAS then NCCL on the same tensors.\n\n");
        Map<String, double[]> byKey = new LinkedHashMap<>();  // "op shape" -> {fused, baseline}
        for (JmhResult r : fused) {
            String key = r.params().getOrDefault("op", "?") + " " + r.params().getOrDefault("shape", "?");
            double us = r.microsPerOp(r.median()).orElse(Double.NaN);
            double[] v = byKey.computeIfAbsent(key, k -> new double[] {Double.NaN, Double.NaN});
            int i = r.method().equals("fused") ? 0 : r.method().equals("baseline") ? 1 : -1;
            if (i >= 0 && !Double.isNaN(us)) {
                v[i] = Double.isNaN(v[i]) ? us : Math.max(v[i], us);
            }
        }
        MarkdownTable t = new MarkdownTable("operation", "M × N × K", "fused µs per call", "cuBLAS → NCCL µs per call", "speedup");
        for (var e : byKey.entrySet()) {
            String[] k = e.getKey().split(" ", 2);
            double[] v = e.getValue();
            t.row(title(k[0]), label(k[1]), Sizes.number(v[0]), Sizes.number(v[1]), Sizes.ratio3(v[1] / v[0]));
        }
        sb.append(t.isEmpty() ? "No FusedBenchmark results.\n" : t.render());
        if (!context.jmhProblems().isEmpty()) {
            sb.append("\nNot used: ").append(String.join("; ", context.jmhProblems())).append('\n');
        }
        return sb.append('\n').toString();
    }

    static boolean withCublasLt(List<Row> rows) {
        return rows.stream().anyMatch(r -> r.cublasLt() != null);
    }

    private String method(List<Row> rows) {
        return "## Method\n\n"
                + "- Per rank, with w ranks: all-scatter runs M × N/w × K and stores every tile into every rank's M × N output "
                + "(baseline: cuBLAS M × N/w × K, then `ncclAllGather`, whose output is rank-major [w][M][N/w]: the same bytes, "
                + "a different layout); all-reduce and reduce-scatter run M × N × K/w and reduce tile by tile (baseline: cuBLAS, "
                + "then `ncclAllReduce` / `ncclReduceScatter`); all-gather + GEMM pushes its M/w rows of A into the peers while it computes "
                + "M × N/w × K (baseline: `ncclAllGather` of A, then cuBLAS).\n"
                + "- Timing: " + sweep.warmup() + " untimed calls, then " + sweep.reps() + " calls queued behind a gate (a kernel "
                + "waiting for a host flag, opened once all are queued), each preceded by an untimed device barrier of all ranks "
                + "and framed by its own pair of CUDA events; the fused call includes its closing barrier. Every rank's times are "
                + "gathered; per repetition the slowest rank counts; the median of those is reported.\n"
                + "- cuBLAS: `cublasGemmEx`, F32 compute, default algorithm" + (withCublasLt(rows) ? ", and cuBLASLt with its "
                + "heuristic's algorithm and a workspace, its product checked against cublasGemmEx's; the baselines run the faster" : "")
                + "; NCCL with NVLS off (`NCCL_NVLS_ENABLE=0`). The GEMM "
                + "alone and the collective alone are measured the same way; \"Iris GEMM alone\" is `dev.irisjvm.kernels.gemm.Gemm` "
                + "on the same per-rank problem. One input set per shape: at the large shapes the operands exceed the 60 MiB L2, "
                + "at the small ones every implementation enjoys the same warm L2.\n"
                + "- Each fused variant is a fresh instance (`FusedConfig` group width " + sweep.groupM() + ", one block per SM), "
                + "called with `run` (eager; epochs grow, no flag resets).\n"
                + "- Output check, once per variant, on an output poisoned with NaN: every element finite and ‖C − C_baseline‖ ÷ "
                + "‖C_baseline‖ ≤ 2u + K 2^-23 (plain elements) or 2(w + 1)u + w K_local 2^-23 (reduced ones). The GPU tests "
                + "(`FusedGpuTest`) check element by element against a double-precision reference and cuBLAS + NCCL.\n\n";
    }

    private static String checks(List<Row> rows) {
        List<String> failed = new ArrayList<>();
        for (Row r : rows) {
            if (r.unsplittable()) {
                continue;
            }
            for (FusedMeasurement m : r.fused().values()) {
                if (m.checkFailed() || m.reps() == 0) {
                    failed.add("- " + r.op() + " " + r.shape() + " " + m.variant() + ": " + m.check());
                }
            }
            for (FusedMeasurement m : new FusedMeasurement[] {r.baselineIris(), r.cublasLt()}) {
                if (m != null && m.checkFailed()) {
                    failed.add("- " + r.op() + " " + r.shape() + " " + m.impl() + ": " + m.check());
                }
            }
        }
        return outputChecks("Output checks", failed, "Every fused output matched cuBLAS → NCCL within the tolerance"
                + (rows.stream().anyMatch(r -> r.baselineIris() != null) ? ", and so did cuBLAS → Iris" : "") + ".");
    }

    // ---- helpers -----------------------------------------------------------------------------------

    /** The variant whose epilogue stores to peers ("epilogue"; all-scatter's older runs: "sequential"), or null. */
    private static FusedMeasurement epilogueVariant(Row r) {
        return r.fused().entrySet().stream().filter(e -> !e.getKey().equals("spare_warps")).map(Map.Entry::getValue).findFirst()
                .orElse(null);
    }

    static String title(String op) {
        return switch (op) {
            case "all_scatter" -> "GEMM + all-scatter";
            case "all_reduce" -> "GEMM + all-reduce";
            case "reduce_scatter" -> "GEMM + reduce-scatter";
            case "all_gather" -> "all-gather + GEMM";
            default -> op;
        };
    }

    static String label(String shape) {
        return shape.replace("x", " × ");
    }

    private static String us(FusedMeasurement m) {
        return Row.timed(m) ? Sizes.number(m.medianUs()) : null;
    }

    /** "380 (spare_warps)": the time and, where it has one, the variant. */
    private static String usWithVariant(FusedMeasurement m) {
        return Row.timed(m) ? us(m) + (m.variant().isEmpty() ? "" : " (" + m.variant() + ")") : null;
    }

    private static String usWithSpeedup(Row r, FusedMeasurement m) {
        if (!Row.timed(m)) {
            return m == null ? null : "not run";
        }
        double s = r.speedup(m);
        return Sizes.number(m.medianUs()) + (Double.isNaN(s) ? "" : " (" + Sizes.ratio3(s) + ")")
                + (m.checkFailed() ? " check failed" : "");
    }

    private static double zero(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? 0.0 : v;
    }
}

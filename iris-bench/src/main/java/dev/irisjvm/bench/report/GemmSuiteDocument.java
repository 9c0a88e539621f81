package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.GemmDocument.Row;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmShapeOrigin;
import dev.irisjvm.bench.results.GemmSweepResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} from a GEMM sweep over a named suite of many shapes ({@code
 * GemmSweep --suite models}, issue 26): the targets (Iris at least {@code minRatio} times the
 * strongest baseline on every shape, at least {@code minRatioGeomean} times as the geometric mean),
 * the worst shapes first, every shape grouped by the model and layer it comes from (the origins the
 * sweep recorded), and each shape's floors against its roofline ({@link GemmRoofline}). Timing,
 * baselines and checks are the GEMM report's ({@link GemmDocument}), whose Method it shares.
 *
 * <pre>{@code
 * new GemmSuiteDocument(StoredResult.read(Path.of("gemm-suite.json"), GemmSweepResult.class), Document.Context.of(BenchmarkTargets.builtIn()))
 *         .write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class GemmSuiteDocument extends Document {
    public static final String MARKDOWN = "gemm-suite.md";
    /** Shapes the summary lists at least, worst first; every failing one is listed however many there are. */
    static final int WORST = 10;
    /** The group of shapes the sweep recorded no origin for (shapes given one by one). */
    static final String NO_ORIGIN = "Shapes without a recorded origin";

    private final GemmSweepResult sweep;
    private final BenchmarkTargets.GemmSuite target;
    private final GemmDocument gemm;
    private final List<Row> rows;
    private final Map<String, List<GemmShapeOrigin>> origins = new LinkedHashMap<>();
    private final GemmRoofline measured;

    public GemmSuiteDocument(GemmSweepResult sweep, Context context) {
        super(ReportKind.GEMM_SUITE, context);
        this.sweep = sweep;
        this.target = context.targets().gemmSuite();
        this.gemm = new GemmDocument(sweep, Context.of(context.targets()));
        this.rows = gemm.rows(target.minRatio());
        for (GemmShapeOrigin o : sweep.originList()) {
            origins.computeIfAbsent(o.shape(), k -> new ArrayList<>()).add(o);
        }
        this.measured = GemmRoofline.measured(sweep.measurements());
    }

    /** The run judged against the suite's targets. */
    GemmSuiteSummary summary() {
        return new GemmSuiteSummary(rows, target.minRatio(), target.minRatioGeomean());
    }

    @Override
    String markdown(Charts charts) {
        return header() + targets() + findings + groups() + floors() + gemm.rounds(rows) + gemm.method() + GemmDocument.checks(rows);
    }

    private String header() {
        String types = rows.stream().map(r -> r.iris().inType() + " → " + r.iris().outType()).distinct().collect(Collectors.joining(", "));
        long models = sweep.originList().stream().map(GemmShapeOrigin::model).distinct().count();
        long groups = sweep.originList().stream().map(GemmShapeOrigin::group).distinct().count();
        String intro = "The GEMM of `dev.irisjvm.kernels.gemm.Gemm` on a suite of shapes taken from the linear layers of real models at "
                + "tensor-parallel degrees 1 to 8, against the faster on each shape of cuBLAS (`cublasGemmEx`) and cuBLASLt "
                + "(`cublasLtMatmul`), on the same inputs, measured in the same run on one GPU, the implementations taking turns over "
                + sweep.rounds() + " rounds per shape. The headline shapes are in [gemm.md](gemm.md).";
        return new ReportHeader("Iris GEMM on model shapes", intro, sweep)
                .item("suite", sweep.suite() == null ? "— (shapes given one by one)" : "`" + sweep.suite() + "`")
                .item("data", (types.isEmpty() ? "—" : types) + ", F32 accumulation; inputs uniform in [-1, 1), generated on the GPU")
                .item("shapes", rows.size() + " (M × N × K; B as N × K \"nk\" or K × N \"kn\"), from " + groups + " layer(s) of "
                        + models + " model(s) or group(s)")
                .end(context, sweep.command());
    }

    private String targets() {
        GemmSuiteSummary s = summary();
        String source = GemmDocument.capitalized(target.source());
        StringBuilder sb = new StringBuilder("## Target\n\n").append(source).append(": Iris at least ").append(target.minRatio())
                .append(" × the strongest baseline's TFLOP/s on every shape (the faster of cuBLAS and cuBLASLt on that shape; one "
                        + "whose output failed its check does not count) and at least ").append(target.minRatioGeomean())
                .append(" × as the geometric mean of the ratios, every figure measured in the same run; TFLOP/s = 2 M N K ÷ median "
                        + "time per call over all rounds. A shape whose Iris output failed its check fails and is left out of the "
                        + "mean.\n\n");
        long judged = s.judged().size();
        sb.append("- every shape at ≥ ").append(target.minRatio()).append(" ×: ").append(s.passing()).append(" of ")
                .append(rows.size()).append(" shape(s) pass");
        List<String> others = new ArrayList<>();
        if (s.checkFailures() > 0) {
            others.add(s.checkFailures() + " failed the output check");
        }
        if (s.notJudged() > 0) {
            others.add(s.notJudged() + " not judged (no usable baseline)");
        }
        sb.append(others.isEmpty() ? "" : " (" + String.join(", ", others) + ")").append(": ")
                .append(rows.isEmpty() ? "not measured" : s.passing() == rows.size() ? "pass" : "**FAIL**").append('\n');
        sb.append("- geometric mean over the ").append(judged).append(" judged shape(s): ").append(Sizes.ratio3(s.geomean()))
                .append(" (≥ ").append(target.minRatioGeomean()).append(" ×): ")
                .append(judged == 0 ? "not measured" : s.geomeanPasses() ? "pass" : "**FAIL**").append("\n\n");
        List<Row> worst = s.worstFirst();
        long failing = worst.stream().filter(r -> r.checkFailed() || !Double.isNaN(r.ratio()) && r.ratio() < target.minRatio()).count();
        int shown = (int) Math.min(worst.size(), Math.max(WORST, failing));
        MarkdownTable t = new MarkdownTable("M × N × K", "B", "from", "Iris TFLOP/s", "baseline", "baseline TFLOP/s", "Iris ÷ baseline",
                "status", "Iris of roofline");
        for (Row r : worst.subList(0, shown)) {
            GemmMeasurement b = r.baseline();
            t.row(GemmDocument.label(r.iris()), r.iris().layout(), from(r), Sizes.number(r.iris().tflops()), b == null ? "—" : b.implName(),
                    b == null ? "—" : Sizes.number(b.tflops()), Sizes.ratio3(r.ratio()), r.status(), ofRoofline(r.iris()));
        }
        sb.append("Worst shapes first (the ").append(shown).append(" lowest; every failing shape is listed):\n\n")
                .append(t.renderOrNone())
                .append("\nRatio to three decimals: ").append(Sizes.justUnder(target.minRatio(), "0.0004"))
                .append(" must not read as a passing ").append(Sizes.twoDecimals(target.minRatio()))
                .append(". \"Iris of roofline\": the shape's roofline at the run's measured peaks (see Floors) ÷ Iris's time.\n\n");
        return sb.toString();
    }

    /** Every shape under each group it comes from, by TP and then M. */
    private String groups() {
        Map<String, List<Map.Entry<Integer, Row>>> byGroup = new LinkedHashMap<>();
        for (Row r : rows) {
            List<GemmShapeOrigin> from = origins.getOrDefault(r.iris().shape(), List.of());
            if (from.isEmpty()) {
                byGroup.computeIfAbsent(NO_ORIGIN, k -> new ArrayList<>()).add(Map.entry(0, r));
            }
            for (GemmShapeOrigin o : from) {
                byGroup.computeIfAbsent(o.group(), k -> new ArrayList<>()).add(Map.entry(o.tp(), r));
            }
        }
        StringBuilder sb = new StringBuilder("## Shapes by model and layer\n\nColumn-parallel layers (qkv_proj, gate_proj/up_proj) split N "
                + "across the TP ranks, row-parallel ones (o_proj, down_proj) split K; M is the tokens of one call (1 to 128 for "
                + "decode, 256 and up for prefill). A shape two layers share is measured once and listed under both.\n\n");
        for (Map.Entry<String, List<Map.Entry<Integer, Row>>> g : byGroup.entrySet()) {
            MarkdownTable t = new MarkdownTable("TP", "M × N × K", "B", "Iris TFLOP/s", "cuBLAS TFLOP/s", "cuBLASLt TFLOP/s", "baseline",
                    "Iris ÷ baseline", "status", "output check");
            g.getValue().stream().sorted(Comparator.comparingInt((Map.Entry<Integer, Row> e) -> e.getKey())
                    .thenComparingInt(e -> e.getValue().iris().m())).forEach(e -> {
                        Row r = e.getValue();
                        t.row(e.getKey() == 0 ? "—" : e.getKey(), GemmDocument.label(r.iris()), r.iris().layout(),
                                Sizes.number(r.iris().tflops()), GemmDocument.measured(r.cublas()), GemmDocument.measured(r.cublasLt()),
                                r.baseline() == null ? "—" : r.baseline().implName(), Sizes.ratio3(r.ratio()), r.status(),
                                r.iris().check());
                    });
            sb.append("### ").append(g.getKey()).append("\n\n").append(t.render()).append('\n');
        }
        return rows.isEmpty() ? sb.append("No measurements.\n\n").toString() : sb.toString();
    }

    private String floors() {
        GemmRoofline sheet = GemmRoofline.DATASHEET;
        MarkdownTable t = new MarkdownTable("M × N × K", "B", "GFLOP", "MiB moved", "Iris µs (min–max)", "baseline µs",
                "compute floor µs, measured", "compute floor µs, datasheet", "memory floor µs, measured", "memory floor µs, datasheet",
                "roofline µs, measured", "roofline µs, datasheet", "bound", "Iris of roofline, measured", "Iris of roofline, datasheet",
                "input sets");
        for (Row r : rows) {
            GemmMeasurement m = r.iris();
            t.row(GemmDocument.label(m), m.layout(), Sizes.number(m.flops() / 1e9), Sizes.number(GemmRoofline.bytes(m) / Sizes.MIB),
                    GemmDocument.span(m), r.baseline() == null ? "—" : Sizes.number(r.baseline().medianUs()),
                    Sizes.number(measured.computeUs(m)), Sizes.number(sheet.computeUs(m)), Sizes.number(measured.memoryUs(m)),
                    Sizes.number(sheet.memoryUs(m)), Sizes.number(measured.floorUs(m)), Sizes.number(sheet.floorUs(m)),
                    sheet.memoryBound(m) ? "memory" : "compute", ofRoofline(m), GemmDocument.percent(sheet.floorUs(m) / m.medianUs()),
                    m.sets());
        }
        return "## Floors\n\nThe shortest time each call can take: its FLOPs at a tensor-core peak (compute floor), or the bytes it must "
                + "move, A and B read and C written once each, at an HBM bandwidth (memory floor), whichever is longer (the roofline; "
                + "\"bound\" names the longer floor at the datasheet's peaks). Measured peaks, the best of any baseline point in this "
                + "run: " + peak(true) + " and " + peak(false) + ". Datasheet peaks: " + Sizes.number(GemmDocument.DATASHEET_TFLOPS)
                + " TFLOP/s (dense BF16/F16, F32 accumulation, H100/H200 SXM) and " + Sizes.number(GemmRoofline.DATASHEET_HBM_TBPS)
                + " TB/s (H200 HBM3e). \"Iris of roofline\" is the roofline ÷ Iris's median time; times are medians per call over all "
                + "rounds, Iris's with its fastest and slowest call.\n\n"
                + t.renderOrNone() + "\n";
    }

    /** "712 TFLOP/s (cuBLASLt, 8192 × 8192 × 4096 nk)" or the bandwidth's, from the baseline point that reached it. */
    private String peak(boolean compute) {
        GemmMeasurement best = null;
        double bestRate = Double.NaN;
        for (GemmMeasurement m : sweep.measurements()) {
            if (m.usableBaseline() && m.medianUs() > 0) {
                double rate = compute ? m.tflops() : GemmRoofline.bytes(m) / (m.medianUs() * 1e6);
                if (best == null || rate > bestRate) {
                    best = m;
                    bestRate = rate;
                }
            }
        }
        String unit = compute ? " TFLOP/s" : " TB/s";
        return best == null ? "no" + unit + " measured (no usable baseline)"
                : Sizes.number(bestRate) + unit + " (" + best.implName() + ", " + GemmDocument.label(best) + " " + best.layout() + ")";
    }

    /** Where a shape comes from: "Llama-3 8B · qkv_proj (column-parallel), TP 4", each origin, or "—". */
    private String from(Row r) {
        List<GemmShapeOrigin> from = origins.getOrDefault(r.iris().shape(), List.of());
        return from.isEmpty() ? "—" : from.stream().map(o -> o.group() + (o.tp() > 0 ? ", TP " + o.tp() : "")).collect(Collectors.joining("; "));
    }

    /** The roofline at the run's measured peaks ÷ Iris's time, as a percentage. */
    private String ofRoofline(GemmMeasurement m) {
        return GemmDocument.percent(measured.floorUs(m) / m.medianUs());
    }
}

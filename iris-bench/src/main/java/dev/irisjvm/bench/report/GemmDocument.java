package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.gemm.OutputCheck;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.core.DType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its chart ({@value #TFLOPS_PNG}) into a folder from one GEMM sweep
 * ({@link dev.irisjvm.bench.gemm.GemmSweep}): per shape, Iris and its baselines in TFLOP/s, the
 * ratio to the strongest baseline against the target ({@link BenchmarkTargets.Gemm}), the times, and the floors (the shape's
 * FLOPs at the run's best baseline rate and at the datasheet's {@value #DATASHEET_TFLOPS} TFLOP/s).
 * The raw JSON it links must already be in that folder ({@link Report} copies it there).
 *
 * <p>Sweeps with rounds ({@link GemmSweepResult#interleaved()}) have two baselines, cuBLAS and
 * cuBLASLt, the faster per shape being the one to reach; sweeps from before rounds had cuBLAS
 * alone, timed after Iris, and their reports say so and show no cuBLASLt columns.
 *
 * <pre>{@code
 * List<String> chartErrors = new GemmDocument(sweep, context).write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class GemmDocument extends Document {
    public static final String MARKDOWN = "gemm.md";
    public static final String TFLOPS_PNG = "gemm-tflops.png";
    /**
     * Dense BF16/F16 tensor-core rate with F32 accumulation of an H100/H200 SXM, TFLOP/s, from
     * NVIDIA's datasheet (1979 with 2:4 sparsity).
     */
    public static final double DATASHEET_TFLOPS = 989;
    /** A cell of a baseline that was not run in an interleaved sweep. */
    static final String NOT_MEASURED = "not measured";

    private final GemmSweepResult sweep;
    private final BenchmarkTargets.Gemm target;

    /** One shape: the Iris point, the baselines' (null where not run), and the ratio that passes. */
    record Row(GemmMeasurement iris, GemmMeasurement cublas, GemmMeasurement cublasLt, double minRatio) {
        /** The faster of the usable baselines ({@link GemmMeasurement#strongest}), or null. */
        GemmMeasurement baseline() {
            return GemmMeasurement.strongest(cublas, cublasLt);
        }

        /** Iris ÷ the strongest baseline, NaN without one. */
        double ratio() {
            GemmMeasurement b = baseline();
            return b == null || iris.tflops() <= 0 ? Double.NaN : iris.tflops() / b.tflops();
        }

        boolean checked() {
            return GemmMeasurement.OK.equals(iris.check());
        }

        boolean checkFailed() {
            return !checked() && !iris.check().startsWith("not checked");
        }

        String status() {
            return Verdict.atLeast(ratio(), minRatio, checkFailed(), false);
        }
    }

    public GemmDocument(GemmSweepResult sweep, Context context) {
        super(ReportKind.GEMM, context);
        this.sweep = sweep;
        this.target = context.targets().gemm();
    }

    /** The shapes in the order the sweep ran them, judged by the GEMM report's target. */
    List<Row> rows() {
        return rows(target.minRatioToCublas());
    }

    /** The shapes in the order the sweep ran them, judged by {@code minRatio} (the suite report's). */
    List<Row> rows(double minRatio) {
        Map<String, Map<String, GemmMeasurement>> byImpl = new LinkedHashMap<>();
        for (String impl : List.of(GemmMeasurement.IRIS, GemmMeasurement.CUBLAS, GemmMeasurement.CUBLASLT)) {
            byImpl.put(impl, new LinkedHashMap<>());
        }
        for (GemmMeasurement m : sweep.measurements()) {
            Map<String, GemmMeasurement> points = byImpl.get(m.impl());
            if (points != null) {
                points.putIfAbsent(m.shape() + " " + m.inType() + " " + m.outType(), m);
            }
        }
        List<Row> rows = new ArrayList<>();
        byImpl.get(GemmMeasurement.IRIS).forEach((key, m) -> rows.add(new Row(m, byImpl.get(GemmMeasurement.CUBLAS).get(key),
                byImpl.get(GemmMeasurement.CUBLASLT).get(key), minRatio)));
        return rows;
    }

    /** The run's best usable baseline point (the floors' peak), or null without one. */
    GemmMeasurement measuredPeakPoint() {
        return sweep.measurements().stream().filter(GemmMeasurement::usableBaseline)
                .max(Comparator.comparingDouble(GemmMeasurement::tflops)).orElse(null);
    }

    /** The run's best baseline rate, NaN without a baseline. */
    double measuredPeak() {
        GemmMeasurement p = measuredPeakPoint();
        return p == null ? Double.NaN : p.tflops();
    }

    /** What the ratios divide by, for the README's status line: "cuBLAS's TFLOP/s", or per shape the faster baseline's. */
    String baselineRate() {
        return sweep.interleaved() ? "the faster of cuBLAS's and cuBLASLt's TFLOP/s per shape" : "cuBLAS's TFLOP/s";
    }

    @Override
    String markdown(Charts charts) {
        List<Row> rows = rows();
        return header(rows) + targets(rows) + findings + chart(rows, charts) + times(rows) + rounds(rows) + method() + checks(rows);
    }

    private String header(List<Row> rows) {
        String types = rows.stream().map(r -> r.iris().inType() + " → " + r.iris().outType()).distinct().collect(Collectors.joining(", "));
        String gemm = "The GEMM of `dev.irisjvm.kernels.gemm.Gemm` (a persistent, warp-specialized wgmma kernel fed by TMA, `gemm.cu`)";
        String intro = !sweep.interleaved()
                ? gemm + " against cuBLAS (`cublasGemmEx`, F32 compute, default algorithm) on the same inputs, measured in the same "
                        + "run on one GPU."
                : gemm + " against the faster on each shape of two baselines, on the same inputs, measured in the same run on one GPU: "
                        + (sweep.cublasLtWorkspaceBytes() > 0 ? "cuBLASLt (`cublasLtMatmul`, F32 compute, the heuristic's best "
                                + "algorithm, a " + Sizes.bytes(sweep.cublasLtWorkspaceBytes()) + " workspace)" : "cuBLASLt (not measured in "
                                + "this run)") + " and cuBLAS (`cublasGemmEx`, F32 compute, default algorithm). The implementations take "
                        + "turns in an interleaved order that changes every round, " + sweep.rounds() + " rounds per shape.";
        return new ReportHeader("Iris GEMM benchmarks", intro, sweep)
                .item("data", (types.isEmpty() ? "—" : types) + ", F32 accumulation; inputs uniform in [-1, 1), generated on the GPU")
                .item("shapes", rows.size() + " (M × N × K; B as N × K \"nk\" or K × N \"kn\")")
                .end(context, sweep.command());
    }

    private String targets(List<Row> rows) {
        boolean two = sweep.interleaved();
        List<String> head = new ArrayList<>(List.of("M × N × K", "B", "Iris TFLOP/s", "cuBLAS TFLOP/s"));
        head.addAll(two ? List.of("cuBLASLt TFLOP/s", "baseline", "Iris ÷ baseline") : List.of("Iris ÷ cuBLAS"));
        head.addAll(List.of("target", "status", "output check"));
        MarkdownTable t = new MarkdownTable(head);
        Tally tally = new Tally();
        for (Row r : rows) {
            GemmMeasurement m = r.iris();
            List<Object> cells = new ArrayList<>(Arrays.asList(label(m), m.layout(), Sizes.number(m.tflops())));
            if (two) {
                cells.add(measured(r.cublas()));
                cells.add(measured(r.cublasLt()));
                cells.add(r.baseline() == null ? "—" : r.baseline().implName());
            } else {
                cells.add(r.cublas() == null ? "—" : Sizes.number(r.cublas().tflops()));
            }
            cells.addAll(Arrays.asList(Sizes.ratio3(r.ratio()), "≥ " + target.minRatioToCublas(), r.status(), m.check()));
            t.row(cells);
            // As in the suite's summary, a failed output check leaves its shape unjudged, where Tally.count would count a fail.
            if (!Double.isNaN(r.ratio()) && !r.checkFailed()) {
                tally.judge(r.ratio() >= target.minRatioToCublas());
            }
        }
        String summary = tally.summary("shape(s) reach the target", rows.size(), "not judged",
                "No shape could be judged (no cuBLAS figures in this run).");
        String goal = two
                ? ": Iris at least " + target.minRatioToCublas() + " × the strongest baseline's TFLOP/s on every shape, the faster of "
                        + "cuBLAS and cuBLASLt on that shape (column \"baseline\"; one whose output failed its check does not count), "
                        + "both measured in the same run; TFLOP/s = 2 M N K ÷ median time per call over all rounds. "
                : ": Iris at least " + target.minRatioToCublas() + " × cuBLAS's TFLOP/s on every shape, cuBLAS measured in the same "
                        + "run; TFLOP/s = 2 M N K ÷ median time per call. ";
        return "## Target\n\n" + capitalized(target.source()) + goal + summary + "\n\n" + t.renderOrNone()
                + "\nRatio to three decimals: " + Sizes.justUnder(target.minRatioToCublas(), "0.0004") + " must not read as a passing "
                + Sizes.twoDecimals(target.minRatioToCublas()) + ".\n\n";
    }

    private String chart(List<Row> rows, Charts charts) {
        if (rows.isEmpty()) {
            return "";
        }
        List<String> labels = rows.stream().map(r -> label(r.iris()) + " " + r.iris().layout()).toList();
        Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("Iris", rows.stream().map(r -> r.iris().tflops()).toList());
        if (rows.stream().anyMatch(r -> r.cublas() != null)) {
            series.put("cuBLAS", rows.stream().map(r -> r.cublas() == null ? 0.0 : r.cublas().tflops()).toList());
        }
        if (rows.stream().anyMatch(r -> r.cublasLt() != null)) {
            series.put("cuBLASLt", rows.stream().map(r -> r.cublasLt() == null ? 0.0 : r.cublasLt().tflops()).toList());
        }
        String names = sweep.interleaved() ? "Iris, cuBLAS and cuBLASLt" : "Iris and cuBLAS";
        return "## Chart\n\n" + charts.link(TFLOPS_PNG, "GEMM TFLOP/s per shape, " + names,
                () -> GemmChart.write("GEMM throughput per shape (datasheet peak " + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s)",
                        labels, series, charts.file(TFLOPS_PNG)));
    }

    private String times(List<Row> rows) {
        boolean two = sweep.interleaved();
        GemmMeasurement peakPoint = measuredPeakPoint();
        double peak = measuredPeak();
        List<String> head = new ArrayList<>(List.of("M × N × K", "B", "TFLOP", "Iris µs (min–max)", "cuBLAS µs (min–max)"));
        if (two) {
            head.add("cuBLASLt µs (min–max)");
        }
        head.addAll(List.of("floor at measured peak µs", "floor at " + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s µs", "Iris of measured peak",
                "Iris of datasheet", "input sets"));
        MarkdownTable t = new MarkdownTable(head);
        for (Row r : rows) {
            GemmMeasurement m = r.iris();
            double flops = m.flops();
            List<Object> cells = new ArrayList<>(Arrays.asList(label(m), m.layout(), Sizes.number(flops / 1e12), span(m)));
            cells.add(r.cublas() == null ? (two ? NOT_MEASURED : null) : span(r.cublas()));
            if (two) {
                cells.add(r.cublasLt() == null ? NOT_MEASURED : span(r.cublasLt()));
            }
            cells.add(Double.isNaN(peak) ? null : Sizes.number(flops / (peak * 1e6)));
            cells.add(Sizes.number(flops / (DATASHEET_TFLOPS * 1e6)));
            cells.add(Double.isNaN(peak) ? null : percent(m.tflops() / peak));
            cells.add(percent(m.tflops() / DATASHEET_TFLOPS));
            cells.add(m.sets());
            t.row(cells);
        }
        String peakText = peakPoint == null ? "not measured (no cuBLAS in this run)"
                : Sizes.number(peak) + " TFLOP/s (" + peakPoint.implName() + "'s best shape in this run)";
        return "## Times and floors\n\nMedian time per call over the timed calls" + (two ? " of all rounds" : "") + ", with the fastest and "
                + "slowest. A floor is the shape's FLOPs at a peak rate: the measured peak, " + peakText + ", and the datasheet's "
                + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s (dense BF16/F16, F32 accumulation, H100/H200 SXM).\n\n"
                + t.renderOrNone() + "\n";
    }

    /** Interleaved sweeps: each round's median per implementation, and the algorithm cuBLASLt's heuristic chose. */
    String rounds(List<Row> rows) {
        if (!sweep.interleaved() || rows.isEmpty()) {
            return "";
        }
        MarkdownTable t = new MarkdownTable("M × N × K", "B", "Iris µs per round", "cuBLAS µs per round", "cuBLASLt µs per round",
                "Iris schedule", "cuBLASLt algorithm");
        for (Row r : rows) {
            t.row(label(r.iris()), r.iris().layout(), perRound(r.iris()), perRound(r.cublas()), perRound(r.cublasLt()),
                    ReportHeader.orDash(r.iris().algorithm()),
                    r.cublasLt() == null ? NOT_MEASURED : ReportHeader.orDash(r.cublasLt().algorithm()));
        }
        return "## Rounds\n\nEach round's median time per call, in the order the rounds ran (the order of the implementations "
                + "within a round changes from one to the next; see Method), how Iris spread the shape over the GPU (whole tiles, or "
                + "stream-K; — in runs from before it was recorded), and the algorithm cuBLASLt's heuristic ranked first for "
                + "the shape.\n\n" + t.render() + "\n";
    }

    /** How the sweep times and checks, from its settings: the GEMM reports' Method section. */
    String method() {
        List<Row> rows = rows();
        int reps = rows.isEmpty() ? 0 : rows.get(0).iris().reps();
        DType named = rows.isEmpty() ? null : OptionChecks.dtype(rows.get(0).iris().outType());
        DType out = named == null ? DType.BF16 : named;
        boolean two = sweep.interleaved();
        String timing = two
                ? "- Per shape: " + sweep.rounds() + " rounds; in each, every implementation in turn makes " + sweep.warmup() + " untimed "
                        + "call(s), then " + reps / sweep.rounds() + " timed calls queued behind a gate (a one-thread kernel that waits "
                        + "for a host flag, opened once every call is queued), each call between its own pair of CUDA events. The order "
                        + "of the implementations changes every round (`RoundOrder`): it rotates by one each round and runs reversed "
                        + "every other cycle, so that over six rounds each of three implementations takes every place twice and comes "
                        + "right after each other one equally often. The median over all " + reps + " timed calls counts; each round's "
                        + "median is in the JSON and under Rounds.\n"
                : "- Per shape and implementation: " + sweep.warmup() + " untimed call(s), then " + reps + " timed calls queued behind a "
                        + "gate (a one-thread kernel that waits for a host flag, opened once every call is queued), each call between its "
                        + "own pair of CUDA events; the median counts.\n";
        String lt = two && sweep.cublasLtWorkspaceBytes() > 0 ? " cuBLASLt: `cublasLtMatmul` with `CUBLAS_COMPUTE_32F` on the same "
                + "operands, the first algorithm `cublasLtMatmulAlgoGetHeuristic` returns for the shape, layout and types (asked once, "
                + "before the first call, and kept), with a " + Sizes.bytes(sweep.cublasLtWorkspaceBytes()) + " workspace offered to the "
                + "heuristic (`CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES`) and given to every call." : "";
        return "## Method\n\n"
                + timing
                + "- Inputs rotate through enough sets (A, B and C each) to hold at least " + Sizes.number(sweep.l2Factor())
                + " × the L2 (" + Sizes.bytes(sweep.l2Bytes()) + ") together, so a call does not find its operands in L2 from the "
                + "call before; one set when one set is already larger (column \"input sets\").\n"
                + "- Iris: `Gemm.matmul` on symmetric-heap tensors, tile order group width " + sweep.groupM() + ". cuBLAS: "
                + "`cublasGemmEx` with `CUBLAS_COMPUTE_32F` and `CUBLAS_GEMM_DEFAULT` on the same row-major tensors (C^T = B^T A^T)."
                + lt + "\n"
                + "- Output check, once per shape on fresh outputs poisoned with NaN: " + (two ? "Iris's and cuBLASLt's outputs each "
                        + "against cuBLAS's, " : "") + "every element finite and ‖C − C_cuBLAS‖ ÷ "
                + "‖C_cuBLAS‖ ≤ 2 u_out + K 2^-23 (" + String.format(Locale.ROOT, "%.3g", OutputCheck.tolerance(out, 4096))
                + " at K = 4096 for " + out + "). The GPU tests check element by element against a CPU reference and cuBLAS.\n\n";
    }

    /** The output checks that failed, Iris's and cuBLASLt's, or a line saying none did. */
    static String checks(List<Row> rows) {
        List<String> failed = new ArrayList<>();
        for (Row r : rows) {
            if (r.checkFailed()) {
                failed.add("- " + r.iris().shape() + ": " + r.iris().check());
            }
            if (r.cublasLt() != null && r.cublasLt().checkFailed()) {
                failed.add("- " + r.iris().shape() + " (cuBLASLt, not counted as a baseline): " + r.cublasLt().check());
            }
        }
        return outputChecks("Output checks", failed, "Every checked shape matched cuBLAS within the tolerance.");
    }

    static String label(GemmMeasurement m) {
        return m.m() + " × " + m.n() + " × " + m.k();
    }

    static String span(GemmMeasurement m) {
        return Sizes.span(m.medianUs(), m.minUs(), m.maxUs());
    }

    static String measured(GemmMeasurement m) {
        return m == null ? NOT_MEASURED : Sizes.number(m.tflops());
    }

    /** A point's round medians, or what is missing. */
    private static String perRound(GemmMeasurement m) {
        return m == null ? NOT_MEASURED : Sizes.numbers(m.roundMediansUs());
    }

    static String percent(double f) {
        return Double.isNaN(f) ? "—" : String.format(Locale.ROOT, "%.1f%%", 100 * f);
    }

    /** "issue 5" as a sentence starts it. */
    static String capitalized(String s) {
        return s == null || s.isEmpty() ? "The target" : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}

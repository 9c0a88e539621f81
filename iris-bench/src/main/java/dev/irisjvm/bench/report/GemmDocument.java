package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.gemm.OutputCheck;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.core.DType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its chart ({@value #TFLOPS_PNG}) into a folder from one GEMM sweep
 * ({@link dev.irisjvm.bench.gemm.GemmSweep}): per shape, Iris and cuBLAS in TFLOP/s, their ratio
 * against the 0.95 target, the times, and the floors (the shape's FLOPs at the run's best cuBLAS
 * rate and at the datasheet's {@value #DATASHEET_TFLOPS} TFLOP/s). The raw JSON it links must already
 * be in that folder ({@link Report} copies it there).
 *
 * <pre>{@code
 * List<String> chartErrors = new GemmDocument(sweep, targets, List.of("gemm-sweep.json"), "bin/iris-bench gemm", "").write(Path.of("docs/benchmarks"));
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

    private final GemmSweepResult sweep;
    private final BenchmarkTargets.Gemm target;
    private final String findings;

    /** One shape: the Iris point, cuBLAS's (null when cuBLAS was not run), and the ratio that passes. */
    record Row(GemmMeasurement iris, GemmMeasurement cublas, double minRatio) {
        double ratio() {
            return cublas == null || cublas.tflops() <= 0 || iris.tflops() <= 0 ? Double.NaN : iris.tflops() / cublas.tflops();
        }

        boolean checked() {
            return GemmMeasurement.OK.equals(iris.check());
        }

        boolean checkFailed() {
            return !checked() && !iris.check().startsWith("not checked");
        }

        String status() {
            if (checkFailed()) {
                return "**FAIL** (output check)";
            }
            if (Double.isNaN(ratio())) {
                return "not measured";
            }
            return ratio() >= minRatio ? "pass" : "**FAIL**";
        }
    }

    public GemmDocument(GemmSweepResult sweep, BenchmarkTargets targets, List<String> rawFiles, String runCommand, String findings) {
        super(ReportKind.GEMM, rawFiles, runCommand);
        this.sweep = sweep;
        this.target = targets.gemm();
        this.findings = ReportHeader.findings(findings);
    }

    /** The shapes in the order the sweep ran them. */
    List<Row> rows() {
        Map<String, GemmMeasurement> iris = new LinkedHashMap<>();
        Map<String, GemmMeasurement> cublas = new LinkedHashMap<>();
        for (GemmMeasurement m : sweep.measurements()) {
            String key = m.shape() + " " + m.inType() + " " + m.outType();
            if (GemmMeasurement.IRIS.equals(m.impl())) {
                iris.putIfAbsent(key, m);
            } else if (GemmMeasurement.CUBLAS.equals(m.impl())) {
                cublas.putIfAbsent(key, m);
            }
        }
        List<Row> rows = new ArrayList<>();
        iris.forEach((key, m) -> rows.add(new Row(m, cublas.get(key), target.minRatioToCublas())));
        return rows;
    }

    /** The run's best cuBLAS rate, NaN without cuBLAS. */
    double measuredPeak() {
        return sweep.measurements().stream().filter(m -> GemmMeasurement.CUBLAS.equals(m.impl()))
                .mapToDouble(GemmMeasurement::tflops).max().orElse(Double.NaN);
    }

    @Override
    String markdown(Charts charts) {
        List<Row> rows = rows();
        return header(rows) + targets(rows) + findings + chart(rows, charts) + times(rows) + method() + checks(rows);
    }

    private String header(List<Row> rows) {
        String types = rows.stream().map(r -> r.iris().inType() + " → " + r.iris().outType()).distinct().collect(Collectors.joining(", "));
        return new ReportHeader("Iris GEMM benchmarks", "The GEMM of `dev.irisjvm.kernels.gemm.Gemm` (a persistent, "
                + "warp-specialized wgmma kernel fed by TMA, `gemm.cu`) against cuBLAS (`cublasGemmEx`, F32 compute, default "
                + "algorithm) on the same inputs, measured in the same run on one GPU.", sweep.date(), sweep.hardware(), sweep.software())
                .item("data", (types.isEmpty() ? "—" : types) + ", F32 accumulation; inputs uniform in [-1, 1), generated on the GPU")
                .item("shapes", rows.size() + " (M × N × K; B as N × K \"nk\" or K × N \"kn\")")
                .end(rawFiles, "Commands", runCommand, List.of(ReportHeader.recorded(sweep.command())));
    }

    private String targets(List<Row> rows) {
        MarkdownTable t = new MarkdownTable("M × N × K", "B", "Iris TFLOP/s", "cuBLAS TFLOP/s", "Iris ÷ cuBLAS", "target", "status",
                "output check");
        long pass = 0;
        long judged = 0;
        for (Row r : rows) {
            GemmMeasurement m = r.iris();
            t.row(label(m), m.layout(), Sizes.number(m.tflops()), r.cublas() == null ? null : Sizes.number(r.cublas().tflops()),
                    ratio(r.ratio()), "≥ " + target.minRatioToCublas(), r.status(), m.check());
            if (!Double.isNaN(r.ratio()) && !r.checkFailed()) {
                judged++;
                if (r.ratio() >= target.minRatioToCublas()) {
                    pass++;
                }
            }
        }
        String summary = judged == 0 ? "No shape could be judged (no cuBLAS figures in this run)."
                : pass + " of " + judged + " shape(s) reach the target" + (judged < rows.size() ? " (" + (rows.size() - judged)
                        + " not judged)" : "") + ".";
        return "## Target\n\n" + capitalized(target.source()) + ": Iris at least " + target.minRatioToCublas() + " × cuBLAS's TFLOP/s on every shape, cuBLAS measured in the same "
                + "run; TFLOP/s = 2 M N K ÷ median time per call. " + summary + "\n\n" + (t.isEmpty() ? "No measurements.\n" : t.render())
                + "\nRatio to three decimals: 0.9496 must not read as a passing 0.95.\n\n";
    }

    private static String chart(List<Row> rows, Charts charts) {
        if (rows.isEmpty()) {
            return "";
        }
        List<String> labels = rows.stream().map(r -> label(r.iris()) + " " + r.iris().layout()).toList();
        List<Double> cublas = rows.stream().anyMatch(r -> r.cublas() != null)
                ? rows.stream().map(r -> r.cublas() == null ? 0.0 : r.cublas().tflops()).toList() : null;
        return "## Chart\n\n" + charts.link(TFLOPS_PNG, "GEMM TFLOP/s per shape, Iris and cuBLAS",
                () -> GemmChart.write("GEMM throughput per shape (datasheet peak " + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s)",
                        labels, rows.stream().map(r -> r.iris().tflops()).toList(), cublas, charts.file(TFLOPS_PNG)));
    }

    private String times(List<Row> rows) {
        double peak = measuredPeak();
        MarkdownTable t = new MarkdownTable("M × N × K", "B", "TFLOP", "Iris µs (min–max)", "cuBLAS µs (min–max)",
                "floor at measured peak µs", "floor at " + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s µs", "Iris of measured peak",
                "Iris of datasheet", "input sets");
        for (Row r : rows) {
            GemmMeasurement m = r.iris();
            double flops = m.flops();
            t.row(label(m), m.layout(), Sizes.number(flops / 1e12), span(m), r.cublas() == null ? null : span(r.cublas()),
                    Double.isNaN(peak) ? null : Sizes.number(flops / (peak * 1e6)), Sizes.number(flops / (DATASHEET_TFLOPS * 1e6)),
                    Double.isNaN(peak) ? null : percent(m.tflops() / peak), percent(m.tflops() / DATASHEET_TFLOPS), m.sets());
        }
        String peakText = Double.isNaN(peak) ? "not measured (no cuBLAS in this run)"
                : Sizes.number(peak) + " TFLOP/s (cuBLAS's best shape in this run)";
        return "## Times and floors\n\nMedian time per call over the timed calls, with the fastest and slowest. A floor is the "
                + "shape's FLOPs at a peak rate: the measured peak, " + peakText + ", and the datasheet's "
                + Sizes.number(DATASHEET_TFLOPS) + " TFLOP/s (dense BF16/F16, F32 accumulation, H100/H200 SXM).\n\n"
                + (t.isEmpty() ? "No measurements.\n" : t.render()) + "\n";
    }

    private String method() {
        List<Row> rows = rows();
        int reps = rows.isEmpty() ? 0 : rows.get(0).iris().reps();
        DType named = rows.isEmpty() ? null : OptionChecks.dtype(rows.get(0).iris().outType());
        DType out = named == null ? DType.BF16 : named;
        return "## Method\n\n"
                + "- Per shape and implementation: " + sweep.warmup() + " untimed call(s), then " + reps + " timed calls queued behind a "
                + "gate (a one-thread kernel that waits for a host flag, opened once every call is queued), each call between its own "
                + "pair of CUDA events; the median counts.\n"
                + "- Inputs rotate through enough sets (A, B and C each) to hold at least " + Sizes.number(sweep.l2Factor())
                + " × the L2 (" + Sizes.bytes(sweep.l2Bytes()) + ") together, so a call does not find its operands in L2 from the "
                + "call before; one set when one set is already larger (column \"input sets\").\n"
                + "- Iris: `Gemm.matmul` on symmetric-heap tensors, tile order group width " + sweep.groupM() + ". cuBLAS: "
                + "`cublasGemmEx` with `CUBLAS_COMPUTE_32F` and `CUBLAS_GEMM_DEFAULT` on the same row-major tensors (C^T = B^T A^T).\n"
                + "- Output check, once per shape on fresh outputs poisoned with NaN: every element finite and ‖C − C_cuBLAS‖ ÷ "
                + "‖C_cuBLAS‖ ≤ 2 u_out + K 2^-23 (" + String.format(Locale.ROOT, "%.3g", OutputCheck.tolerance(out, 4096))
                + " at K = 4096 for " + out + "). The GPU tests check element by element against a CPU reference and cuBLAS.\n\n";
    }

    private static String checks(List<Row> rows) {
        List<String> failed = rows.stream().filter(Row::checkFailed).map(r -> "- " + r.iris().shape() + ": " + r.iris().check())
                .toList();
        return "## Output checks\n\n" + (failed.isEmpty() ? "Every checked shape matched cuBLAS within the tolerance.\n"
                : String.join("\n", failed) + "\n");
    }

    private static String label(GemmMeasurement m) {
        return m.m() + " × " + m.n() + " × " + m.k();
    }

    private static String span(GemmMeasurement m) {
        return Sizes.number(m.medianUs()) + " (" + Sizes.number(m.minUs()) + "–" + Sizes.number(m.maxUs()) + ")";
    }

    private static String ratio(double r) {
        return Double.isNaN(r) ? "—" : String.format(Locale.ROOT, "%.3f×", r);
    }

    private static String percent(double f) {
        return Double.isNaN(f) ? "—" : String.format(Locale.ROOT, "%.1f%%", 100 * f);
    }

    /** "issue 5" as a sentence starts it. */
    static String capitalized(String s) {
        return s == null || s.isEmpty() ? "The target" : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}

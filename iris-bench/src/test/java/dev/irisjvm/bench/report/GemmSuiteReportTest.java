package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.cli.IrisBench;
import dev.irisjvm.bench.report.GemmDocument.Row;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The suite report on a synthetic sweep with known answers (test resource {@value #SYNTHETIC}, made
 * up, not measured): per-shape verdicts against 0.90, the geometric mean against 0.97, the worst
 * shapes first, the groups, and each shape's roofline.
 *
 * <p>The sweep: 1 x 6144 x 4096 nk (Iris 20 µs, cuBLASLt 16: 0.800, fail), 4096 x 6144 x 4096 kn
 * (Iris 300, cuBLASLt 305: 1.017, pass), 16 x 14336 x 4096 kn shared by Llama-3 8B's and Mixtral's
 * MLP (Iris 60, cuBLAS 57, no cuBLASLt: 0.950), 4000 x 5000 x 3000 nk (cuBLASLt faster but its
 * output failed, so cuBLAS 480 against Iris 500: 0.960), 1536^3 kn (Iris's output failed), 2049 x
 * 3000 x 2000 kn (Iris alone: not judged).
 */
class GemmSuiteReportTest {
    static final String SYNTHETIC = "gemm-suite-synthetic.json";

    @TempDir
    Path dir;

    static GemmSweepResult synthetic(Path dir) throws IOException {
        Path json = dir.resolve(SYNTHETIC);
        try (InputStream in = GemmSuiteReportTest.class.getResourceAsStream(SYNTHETIC)) {
            Files.copy(in, json, StandardCopyOption.REPLACE_EXISTING);
        }
        return StoredResult.read(json, GemmSweepResult.class);
    }

    private GemmSuiteDocument document() throws IOException {
        return new GemmSuiteDocument(synthetic(dir), Document.Context.of(BenchmarkTargets.builtIn()));
    }

    @Test
    void verdictsAndGeometricMean() throws IOException {
        GemmSuiteSummary s = document().summary();
        assertEquals(6, s.rows().size());
        assertEquals(4, s.judged().size(), "the failed output check and the shape without a baseline are not judged");
        assertEquals(3, s.passing(), "0.800 misses 0.90; 1.017, 0.950 and 0.960 reach it");
        assertEquals(1, s.checkFailures());
        assertEquals(1, s.notJudged());
        double mean = Math.exp((Math.log(16.0 / 20) + Math.log(305.0 / 300) + Math.log(57.0 / 60) + Math.log(480.0 / 500)) / 4);
        assertEquals(mean, s.geomean(), 1e-12);
        assertFalse(s.geomeanPasses(), "0.928 < 0.97");
        assertFalse(s.passes());
        List<String> order = s.worstFirst().stream().map(r -> r.iris().shape()).toList();
        assertEquals(List.of("1536x1536x1536:kn", "1x6144x4096:nk", "16x14336x4096:kn", "4000x5000x3000:nk", "4096x6144x4096:kn",
                "2049x3000x2000:kn"), order, "failed checks, then the lowest ratios, then the unjudged");
    }

    /** All judged shapes at 0.90 or more does not pass the suite unless the mean reaches 0.97, and the other way round. */
    @Test
    void bothTargetsMustHold() throws IOException {
        List<Row> rows = document().summary().judged();
        Row low = rows.get(0);
        List<Row> atPoint95 = rows.stream().filter(r -> r != low).toList();   // 1.017, 0.950, 0.960: mean 0.975
        assertTrue(new GemmSuiteSummary(atPoint95, 0.90, 0.97).passes());
        assertFalse(new GemmSuiteSummary(atPoint95, 0.90, 0.98).passes(), "the mean 0.975 misses 0.98");
        assertFalse(new GemmSuiteSummary(atPoint95, 0.96, 0.97).passes(), "0.950 misses 0.96");
        assertFalse(new GemmSuiteSummary(List.of(), 0.90, 0.97).passes(), "nothing measured passes nothing");
    }

    /** Memory-bound small M and compute-bound large M, at the run's best baseline rates and the datasheet's. */
    @Test
    void roofline() throws IOException {
        GemmSweepResult sweep = synthetic(dir);
        GemmMeasurement decode = iris(sweep, "1x6144x4096:nk");
        double bytes = (1.0 * 4096 + 6144.0 * 4096) * 2 + 6144.0 * 2;
        assertEquals(bytes, GemmRoofline.bytes(decode), 0);
        assertTrue(GemmRoofline.DATASHEET.memoryBound(decode));
        assertEquals(bytes / 4.8e6, GemmRoofline.DATASHEET.floorUs(decode), 1e-9, "4.8 TB/s");
        GemmRoofline measured = GemmRoofline.measured(sweep.measurements());
        assertEquals(bytes / 16e-6 / 1e12, measured.tbps(), 1e-9, "cuBLASLt's 16 µs on the decode shape is the best bandwidth");
        assertEquals(16, measured.floorUs(decode), 1e-9);
        GemmMeasurement prefill = iris(sweep, "4096x6144x4096:kn");
        assertFalse(GemmRoofline.DATASHEET.memoryBound(prefill));
        assertEquals(prefill.flops() / 989e6, GemmRoofline.DATASHEET.floorUs(prefill), 1e-9);
        assertEquals(prefill.flops() / 305e-6 / 1e12, measured.tflops(), 1e-6, "cuBLASLt on the prefill shape is the best rate");
        assertEquals(305, measured.floorUs(prefill), 1e-9);
        assertTrue(Double.isNaN(GemmRoofline.measured(List.of(decode)).floorUs(decode)), "no baseline, no measured roofline");
    }

    @Test
    void writesTheReportThroughTheCommandLine() throws IOException {
        synthetic(dir);
        Path out = dir.resolve("out");
        int rc = IrisBench.commandLine().execute("report", "gemm-suite", "--sweep", dir.resolve(SYNTHETIC).toString(), "--out",
                out.toString(), "--run-command", "bin/iris-bench gemm --suite models");
        assertEquals(0, rc);
        String md = Files.readString(out.resolve(GemmSuiteDocument.MARKDOWN));
        assertTrue(md.startsWith("# Iris GEMM on model shapes"), md);
        assertContains(md,
                "- **suite**: `models`",
                "- every shape at ≥ 0.9 ×: 3 of 6 shape(s) pass (1 failed the output check, 1 not judged (no usable "
                        + "baseline)): **FAIL**",
                "- geometric mean over the 4 judged shape(s): 0.928× (≥ 0.97 ×): **FAIL**");
        // Worst first: the failed check, then 0.800.
        int check = md.indexOf("| 1536 × 1536 × 1536 | kn | Tile edges · M, N or K not a multiple of the tile |");
        int low = md.indexOf("| 1 × 6144 × 4096 | nk | Llama-3 8B · qkv_proj (column-parallel), TP 1 | 2.52 | cuBLASLt | 3.15 | 0.800× "
                + "| **FAIL** | 80.0% |");
        assertTrue(check > 0 && low > check, md);
        assertTrue(md.contains("| 16 × 14336 × 4096 | kn | Llama-3 8B · gate_proj/up_proj (column-parallel), TP 1; Mixtral 8x7B · expert "
                + "gate_proj/up_proj (column-parallel), TP 1 |"), md);
        // Grouped: the shared shape under both groups, the tile edges without a TP.
        assertTrue(md.contains("### Llama-3 8B · qkv_proj (column-parallel)"), md);
        assertTrue(md.contains("### Mixtral 8x7B · expert gate_proj/up_proj (column-parallel)\n\n"), md);
        assertEquals(2, count(md, "| 1 | 16 × 14336 × 4096 | kn | 31.3 | 33.0 | not measured | cuBLAS | 0.950× | pass | ok |"), md);
        assertTrue(md.contains("| — | 4000 × 5000 × 3000 | nk | 240 | 250 | 261 | cuBLAS | 0.960× | pass | ok |"), md);
        assertTrue(md.contains("| — | 2049 × 3000 × 2000 | kn |"), md);
        // Floors of the decode shape: 0.050 GFLOP, 48.0 MiB; compute floors 0.074 µs (676 TFLOP/s) and 0.051 (989); memory
        // floors 16.0 µs (3.15 TB/s) and 10.5 (4.8 TB/s); memory-bound, Iris's 20 µs 80.0 % and 52.5 % of the rooflines.
        assertContains(md,
                "| 1 × 6144 × 4096 | nk | 0.050 | 48.0 | 20.0 (19.6–21.0) | 16.0 | 0.074 | 0.051 | 16.0 | 10.5 | 16.0 "
                        + "| 10.5 | memory | 80.0% | 52.5% | 1 |",
                "| 4096 × 6144 × 4096 | kn | 206 | 128 | 300 (294–315) | 305 | 305 | 208 | 42.6 | 28.0 | 305 | 208 "
                        + "| compute | 101.7% | 69.5% | 1 |",
                "## Rounds",
                "Measured peaks, the best of any baseline point in this run: 676 TFLOP/s (cuBLASLt, 4096 × 6144 × 4096 kn) "
                        + "and 3.15 TB/s (cuBLASLt, 1 × 6144 × 4096 nk).",
                "- 1536x1536x1536:kn: relative difference to cuBLAS 0.7 exceeds 0.0083",
                "[gemm-suite.json](gemm-suite.json)");
        assertTrue(Files.isRegularFile(out.resolve(ReportKind.GEMM_SUITE.sweepFile())));
    }

    /** With every bound out of reach, nothing in the targets passes (as for the committed reports). */
    @Test
    void judgesByTheTargetsFileBesideTheReport() throws IOException {
        synthetic(dir);
        Path out = Files.createDirectories(dir.resolve("out"));
        Files.writeString(out.resolve(BenchmarkTargets.FILE), CommittedReportsTest.unreachable(
                Files.readString(CommittedReportsTest.COMMITTED.resolve(BenchmarkTargets.FILE))));
        IrisBench.commandLine().execute("report", "gemm-suite", "--sweep", dir.resolve(SYNTHETIC).toString(), "--out", out.toString());
        String md = Files.readString(out.resolve(GemmSuiteDocument.MARKDOWN));
        String targets = md.substring(md.indexOf("## Target"), md.indexOf("## Shapes by model and layer"));
        assertFalse(targets.contains("| pass |"), targets);
        assertTrue(targets.contains("0 of 6 shape(s) pass") && targets.contains("**FAIL**"), targets);
    }

    private static GemmMeasurement iris(GemmSweepResult sweep, String shape) {
        return sweep.measurements().stream().filter(m -> m.shape().equals(shape) && GemmMeasurement.IRIS.equals(m.impl())).findFirst()
                .orElseThrow();
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }
}

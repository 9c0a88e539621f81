package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The GEMM report from a synthetic sweep with known answers: ratios, verdicts, floors, the chart, the JSON round trip. */
class GemmReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @TempDir
    Path dir;

    private static GemmMeasurement point(int m, int n, int k, String layout, String impl, double us, String check) {
        double tflops = 2.0 * m * n * k / (us * 1e6);
        return new GemmMeasurement(m + "x" + n + "x" + k + ":" + layout, m, n, k, layout, "bf16", "bf16", impl, 30, 1, us, us * 0.98,
                us * 1.04, tflops, check);
    }

    /**
     * 8192^3 nk: Iris 1500 µs vs cuBLAS 1450 µs (0.967, pass); 8192^3 kn: 1700 vs 1450 (0.853, fail);
     * 4096^3: Iris only (not measured); 1024 x 8192 x 8192: fast but its output check failed.
     */
    static GemmSweepResult sweep() {
        List<GemmMeasurement> ms = new ArrayList<>();
        ms.add(point(8192, 8192, 8192, "nk", GemmMeasurement.IRIS, 1500, "ok"));
        ms.add(point(8192, 8192, 8192, "nk", GemmMeasurement.CUBLAS, 1450, GemmMeasurement.REFERENCE));
        ms.add(point(8192, 8192, 8192, "kn", GemmMeasurement.IRIS, 1700, "ok"));
        ms.add(point(8192, 8192, 8192, "kn", GemmMeasurement.CUBLAS, 1450, GemmMeasurement.REFERENCE));
        ms.add(point(4096, 4096, 4096, "nk", GemmMeasurement.IRIS, 200, "not checked (no cuBLAS: --no-cublas)"));
        ms.add(point(1024, 8192, 8192, "nk", GemmMeasurement.IRIS, 150, "relative difference to cuBLAS 0.5 exceeds 0.0083"));
        ms.add(point(1024, 8192, 8192, "nk", GemmMeasurement.CUBLAS, 200, GemmMeasurement.REFERENCE));
        return new GemmSweepResult("2026-12-01T10:00:00Z", "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0, L2 60 MiB)",
                "CUDA 13.0 (driver 13.0), cuBLAS 13.0.2, Java 17", "java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep",
                60L << 20, 2, 5, 8, ms);
    }

    @Test
    void rowsRatiosAndVerdicts() {
        GemmDocument d = new GemmDocument(sweep(), BenchmarkTargets.builtIn(), List.of(), null, null);
        List<GemmDocument.Row> rows = d.rows();
        assertEquals(4, rows.size());
        assertEquals(1450.0 / 1500, rows.get(0).ratio(), 1e-12);
        assertEquals("pass", rows.get(0).status());
        assertEquals("**FAIL**", rows.get(1).status());
        assertEquals("not measured", rows.get(2).status());
        assertEquals("**FAIL** (output check)", rows.get(3).status());
        double peak = 2.0 * 8192 * 8192 * 8192 / (1450 * 1e6);
        assertEquals(peak, d.measuredPeak(), 1e-9, "cuBLAS's best shape");
    }

    @Test
    void writesTheReportAndTheChart() throws IOException {
        GemmSweepResult s = sweep();
        Path json = dir.resolve("in.json");
        s.write(json);
        Path out = dir.resolve("out");
        int rc = IrisBench.commandLine().execute("report", "gemm", "--sweep", json.toString(), "--out", out.toString(), "--run-command", "bin/iris-bench gemm");
        assertEquals(0, rc);
        String md = Files.readString(out.resolve(GemmDocument.MARKDOWN));
        assertTrue(md.startsWith("# Iris GEMM benchmarks"), md);
        assertTrue(md.contains("| 8192 × 8192 × 8192 | nk | 733 | 758 | 0.967× | ≥ 0.95 | pass | ok |"), md);
        assertTrue(md.contains("| 8192 × 8192 × 8192 | kn | 647 | 758 | 0.853× | ≥ 0.95 | **FAIL** | ok |"), md);
        assertTrue(md.contains("| 4096 × 4096 × 4096 | nk | 687 | — | — | ≥ 0.95 | not measured |"), md);
        assertTrue(md.contains("1 of 2 shape(s) reach the target (2 not judged)."), md);
        assertTrue(md.contains("- 1024x8192x8192:nk: relative difference to cuBLAS 0.5 exceeds 0.0083"), md);
        // Floors: 8192^3 is 1.1 TFLOP; at 989 TFLOP/s that is 1112 µs, at the measured 758 TFLOP/s 1450 µs.
        assertTrue(md.contains("| 8192 × 8192 × 8192 | nk | 1.10 | 1500 (1470–1560) | 1450 (1421–1508) | 1450 | 1112 | 96.7% | 74.1% | 1 |"), md);
        assertTrue(md.contains("![GEMM TFLOP/s per shape, Iris and cuBLAS](" + GemmDocument.TFLOPS_PNG + ")"), md);
        assertTrue(md.contains("[gemm-sweep.json](gemm-sweep.json)"), md);
        assertTrue(md.contains("bin/iris-bench gemm\n# which ran:\njava -cp"), md);
        assertTrue(Files.size(out.resolve(ReportKind.GEMM.sweepFile())) > 0);
        assertEquals(s, GemmSweepResult.read(out.resolve(ReportKind.GEMM.sweepFile())), "the JSON round trip keeps every field");
        Path png = out.resolve(GemmDocument.TFLOPS_PNG);
        assertTrue(Files.size(png) > 1000);
        byte[] head = new byte[PNG_SIGNATURE.length];
        try (InputStream in = Files.newInputStream(png)) {
            assertEquals(head.length, in.read(head));
        }
        assertArrayEquals(PNG_SIGNATURE, head);
    }

    @Test
    void findingsFollowTheTarget() throws IOException {
        Path f = dir.resolve("findings.md");
        Files.writeString(f, "The kn layout loses 15%: ...\n");
        GemmSweepResult s = sweep();
        Path json = dir.resolve("in.json");
        s.write(json);
        assertEquals(0, IrisBench.commandLine().execute("report", "gemm", "--sweep", json.toString(), "--out", dir.toString(), "--findings", f.toString()));
        String md = Files.readString(dir.resolve(GemmDocument.MARKDOWN));
        assertTrue(md.indexOf("## Findings") > md.indexOf("## Target") && md.indexOf("## Findings") < md.indexOf("## Chart"), md);
    }

    @Test
    void unreadableInputIsExitOne() throws IOException {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{not json");
        assertEquals(1, IrisBench.commandLine().execute("report", "gemm", "--sweep", bad.toString(), "--out", dir.resolve("o").toString()));
        assertEquals(2, IrisBench.commandLine().execute("report", "gemm", "--out", dir.toString()));
    }
}

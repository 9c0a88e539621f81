package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GEMM report from synthetic sweeps with known answers: ratios against the strongest baseline,
 * verdicts, floors, the chart, the JSON round trip, and JSON from before rounds and cuBLASLt.
 */
class GemmReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @TempDir
    Path dir;

    private static GemmMeasurement point(int m, int n, int k, String layout, String impl, double us, String check) {
        double tflops = 2.0 * m * n * k / (us * 1e6);
        return new GemmMeasurement(m + "x" + n + "x" + k + ":" + layout, m, n, k, layout, "bf16", "bf16", impl, 30, 1, us, us * 0.98,
                us * 1.04, tflops, check, null, null);
    }

    private static GemmMeasurement point(int m, int n, int k, String layout, String impl, double us, String check, String algorithm) {
        GemmMeasurement p = point(m, n, k, layout, impl, us, check);
        return new GemmMeasurement(p.shape(), m, n, k, layout, "bf16", "bf16", impl, 180, 1, us, us * 0.98, us * 1.04, p.tflops(), check,
                List.of(us, us * 1.01, us * 0.99, us, us * 1.02, us), algorithm);
    }

    private static final String ALGO = "algo 66, tile 128x256, stages 64x4, cluster 2x1x1, workspace 0 B, 0.97 waves";

    /**
     * An interleaved sweep (6 rounds, cuBLASLt with 32 MiB): 8192^3 nk, cuBLASLt 1400 µs is the
     * faster baseline (Iris 1500: 0.933, fail); 4096^3 kn, cuBLAS 176 µs is (Iris 170: 1.035,
     * pass); 1024 x 8192 x 8192 without cuBLASLt (cuBLAS 180 vs Iris 150: 1.2); 2048^3, cuBLASLt
     * fastest of all (15 µs) but its output failed the check, so cuBLAS (45 µs) is the baseline and
     * cuBLASLt's 8192^3 the measured peak.
     */
    static GemmSweepResult interleavedSweep() {
        List<GemmMeasurement> ms = new ArrayList<>();
        ms.add(point(8192, 8192, 8192, "nk", GemmMeasurement.IRIS, 1500, "ok", null));
        ms.add(point(8192, 8192, 8192, "nk", GemmMeasurement.CUBLAS, 1450, GemmMeasurement.REFERENCE, null));
        ms.add(point(8192, 8192, 8192, "nk", GemmMeasurement.CUBLASLT, 1400, "ok", ALGO));
        ms.add(point(4096, 4096, 4096, "kn", GemmMeasurement.IRIS, 170, "ok", null));
        ms.add(point(4096, 4096, 4096, "kn", GemmMeasurement.CUBLAS, 176, GemmMeasurement.REFERENCE, null));
        ms.add(point(4096, 4096, 4096, "kn", GemmMeasurement.CUBLASLT, 180, "ok", ALGO));
        ms.add(point(1024, 8192, 8192, "nk", GemmMeasurement.IRIS, 150, "ok", null));
        ms.add(point(1024, 8192, 8192, "nk", GemmMeasurement.CUBLAS, 180, GemmMeasurement.REFERENCE, null));
        ms.add(point(2048, 2048, 2048, "nk", GemmMeasurement.IRIS, 40, "ok", null));
        ms.add(point(2048, 2048, 2048, "nk", GemmMeasurement.CUBLAS, 45, GemmMeasurement.REFERENCE, null));
        ms.add(point(2048, 2048, 2048, "nk", GemmMeasurement.CUBLASLT, 15, "relative difference to cuBLAS 0.5 exceeds 0.0083", ALGO));
        return new GemmSweepResult("2026-12-03T10:00:00Z", "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0, L2 60 MiB)",
                "CUDA 13.0 (driver 13.0), cuBLAS 13.1.0, cuBLASLt 13.1.0 (32 MiB workspace), Java 17",
                "java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --rounds 6", 60L << 20, 2, 5, 8, ms, 6, 32L << 20, null, null);
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
                60L << 20, 2, 5, 8, ms, 0, 0, null, null);
    }

    @Test
    void rowsRatiosAndVerdicts() {
        GemmDocument d = new GemmDocument(sweep(), Document.Context.of(BenchmarkTargets.builtIn()));
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
    void interleavedRowsDivideByTheFasterBaseline() {
        GemmDocument d = new GemmDocument(interleavedSweep(), Document.Context.of(BenchmarkTargets.builtIn()));
        List<GemmDocument.Row> rows = d.rows();
        assertEquals(4, rows.size());
        assertEquals(GemmMeasurement.CUBLASLT, rows.get(0).baseline().impl());
        assertEquals(1400.0 / 1500, rows.get(0).ratio(), 1e-12);
        assertEquals("**FAIL**", rows.get(0).status());
        assertEquals(GemmMeasurement.CUBLAS, rows.get(1).baseline().impl());
        assertEquals(176.0 / 170, rows.get(1).ratio(), 1e-12);
        assertEquals("pass", rows.get(1).status());
        assertNull(rows.get(2).cublasLt());
        assertEquals(GemmMeasurement.CUBLAS, rows.get(2).baseline().impl());
        assertEquals(GemmMeasurement.CUBLAS, rows.get(3).baseline().impl(), "cuBLASLt's wrong output does not count");
        assertEquals(2.0 * 8192 * 8192 * 8192 / (1400 * 1e6), d.measuredPeak(), 1e-9, "the best usable baseline point");
        assertEquals("the faster of cuBLAS's and cuBLASLt's TFLOP/s per shape", d.baselineRate());
        assertEquals("cuBLAS's TFLOP/s", new GemmDocument(sweep(), Document.Context.of(BenchmarkTargets.builtIn())).baselineRate());
    }

    @Test
    void interleavedReportNamesBothBaselinesAndTheRounds() throws IOException {
        GemmSweepResult s = interleavedSweep();
        Path out = dir.resolve("out");
        String md = report(s, out);
        assertContains(md,
                "against the faster on each shape of two baselines, on the same inputs, measured in the same run on one "
                        + "GPU: cuBLASLt (`cublasLtMatmul`, F32 compute, the heuristic's best algorithm, a 32 MiB workspace) and cuBLAS "
                        + "(`cublasGemmEx`, F32 compute, default algorithm). The implementations take turns in an interleaved order that "
                        + "changes every round, 6 rounds per shape.",
                "| M × N × K | B | Iris TFLOP/s | cuBLAS TFLOP/s | cuBLASLt TFLOP/s | baseline | Iris ÷ baseline |",
                "| 8192 × 8192 × 8192 | nk | 733 | 758 | 785 | cuBLASLt | 0.933× | ≥ 0.95 | **FAIL** | ok |",
                "| 4096 × 4096 × 4096 | kn | 808 | 781 | 764 | cuBLAS | 1.035× | ≥ 0.95 | pass | ok |",
                "| 1024 × 8192 × 8192 | nk | 916 | 764 | not measured | cuBLAS | 1.200× | ≥ 0.95 | pass | ok |",
                "3 of 4 shape(s) reach the target.",
                "785 TFLOP/s (cuBLASLt's best shape in this run)",
                "| 1024 × 8192 × 8192 | nk | 0.137 | 150 (147–156) | 180 (176–187) | not measured |",
                "## Rounds",
                "| 8192 × 8192 × 8192 | nk | 1500 · 1515 · 1485 · 1500 · 1530 · 1500 |",
                ALGO + " |",
                "- Per shape: 6 rounds; in each, every implementation in turn makes 5 untimed call(s), then 30 timed "
                        + "calls",
                "The median over all 180 timed calls counts",
                "with a 32 MiB workspace offered to the heuristic",
                "- 2048x2048x2048:nk (cuBLASLt, not counted as a baseline): relative difference to cuBLAS 0.5",
                "![GEMM TFLOP/s per shape, Iris, cuBLAS and cuBLASLt](" + GemmDocument.TFLOPS_PNG + ")");
        assertEquals(s, StoredResult.read(out.resolve(ReportKind.GEMM.sweepFile()), GemmSweepResult.class), "the round medians and algorithms survive");
    }

    /** A sweep with rounds where cuBLASLt could not run: its cells say so, and cuBLAS is the baseline. */
    @Test
    void interleavedWithoutCublasLtSaysNotMeasured() throws IOException {
        GemmSweepResult full = interleavedSweep();
        GemmSweepResult s = new GemmSweepResult(full.date(), full.hardware(), full.software(), full.command(), full.l2Bytes(),
                full.l2Factor(), full.warmup(), full.groupM(), full.measurements().stream()
                        .filter(m -> !GemmMeasurement.CUBLASLT.equals(m.impl())).toList(), 6, 0, null, null);
        String md = report(s, dir);
        assertTrue(md.contains("cuBLASLt (not measured in this run) and cuBLAS (`cublasGemmEx`"), md);
        assertTrue(md.contains("| 8192 × 8192 × 8192 | nk | 733 | 758 | not measured | cuBLAS | 0.967× | ≥ 0.95 | pass | ok |"), md);
    }

    /** JSON from before rounds and cuBLASLt (the committed format): read as one round of Iris then cuBLAS, reported as it was. */
    @Test
    void jsonFromBeforeRoundsReadsAndReportsAsBefore() throws IOException {
        Path json = dir.resolve("old.json");
        Files.writeString(json, """
                {"date": "2026-12-02T00:41:10Z", "hardware": "NVIDIA H200", "software": "CUDA 13.0, cuBLAS 13.1.0, Java 17",
                 "command": "java ... GemmSweep", "l2Bytes": 62914560, "l2Factor": 2.0, "warmup": 5, "groupM": 8,
                 "measurements": [
                  {"shape": "4096x4096x4096:nk", "m": 4096, "n": 4096, "k": 4096, "layout": "nk", "inType": "bf16", "outType": "bf16",
                   "impl": "iris", "reps": 30, "sets": 2, "medianUs": 176.0, "minUs": 175.0, "maxUs": 182.0, "tflops": 781.0,
                   "check": "ok"},
                  {"shape": "4096x4096x4096:nk", "m": 4096, "n": 4096, "k": 4096, "layout": "nk", "inType": "bf16", "outType": "bf16",
                   "impl": "cublas", "reps": 30, "sets": 2, "medianUs": 172.0, "minUs": 172.0, "maxUs": 179.0, "tflops": 797.0,
                   "check": "reference"}]}
                """);
        GemmSweepResult s = StoredResult.read(json, GemmSweepResult.class);
        assertFalse(s.interleaved());
        assertEquals(0, s.rounds());
        assertEquals(0, s.cublasLtWorkspaceBytes());
        assertNull(s.measurements().get(0).roundMediansUs());
        assertNull(s.measurements().get(1).algorithm());
        GemmDocument.Row row = new GemmDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).rows().get(0);
        assertNull(row.cublasLt());
        assertEquals(781.0 / 797.0, row.ratio(), 1e-12);
        assertEquals(0, IrisBench.commandLine().execute("report", "gemm", "--sweep", json.toString(), "--out", dir.toString()));
        String md = Files.readString(dir.resolve(GemmDocument.MARKDOWN));
        assertContains(md,
                "against cuBLAS (`cublasGemmEx`, F32 compute, default algorithm) on the same inputs",
                "| 4096 × 4096 × 4096 | nk | 781 | 797 | 0.980× | ≥ 0.95 | pass | ok |",
                "- Per shape and implementation: 5 untimed call(s), then 30 timed calls");
        assertFalse(md.contains("cuBLASLt") || md.contains("## Rounds"), md);
    }

    /** A sweep from before rounds (e173bd1's): no cuBLASLt in it, every ratio against cuBLAS. */
    @Test
    void aSweepFromBeforeRoundsIsReadAsOneRoundAgainstCublas() throws Exception {
        GemmSweepResult s = StoredResult.read(Path.of(GemmReportTest.class.getResource("gemm-sweep-2026-12-02-e173bd1.json").toURI()), GemmSweepResult.class);
        assertFalse(s.interleaved());
        for (GemmDocument.Row r : new GemmDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).rows()) {
            assertNull(r.cublasLt(), r.iris().shape());
            assertEquals(GemmMeasurement.CUBLAS, r.baseline().impl(), r.iris().shape());
        }
    }

    /** The committed sweep has rounds and cuBLASLt: every shape's baseline is the faster of its two usable ones. */
    @Test
    void theCommittedSweepIsJudgedAgainstTheFasterBaseline() throws IOException {
        GemmSweepResult s = StoredResult.read(CommittedReportsTest.COMMITTED.resolve(ReportKind.GEMM.sweepFile()), GemmSweepResult.class);
        assertTrue(s.interleaved());
        for (GemmDocument.Row r : new GemmDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).rows()) {
            assertEquals(GemmMeasurement.strongest(r.cublas(), r.cublasLt()), r.baseline(), r.iris().shape());
            assertTrue(r.baseline().tflops() >= Math.max(r.cublas().usableBaseline() ? r.cublas().tflops() : 0,
                    r.cublasLt().usableBaseline() ? r.cublasLt().tflops() : 0), r.iris().shape());
        }
    }

    @Test
    void writesTheReportAndTheChart() throws IOException {
        GemmSweepResult s = sweep();
        Path out = dir.resolve("out");
        String md = report(s, out, "--run-command", "bin/iris-bench gemm");
        assertTrue(md.startsWith("# Iris GEMM benchmarks"), md);
        assertContains(md,
                "| 8192 × 8192 × 8192 | nk | 733 | 758 | 0.967× | ≥ 0.95 | pass | ok |",
                "| 8192 × 8192 × 8192 | kn | 647 | 758 | 0.853× | ≥ 0.95 | **FAIL** | ok |",
                "| 4096 × 4096 × 4096 | nk | 687 | — | — | ≥ 0.95 | not measured |",
                "1 of 2 shape(s) reach the target (2 not judged).",
                "- 1024x8192x8192:nk: relative difference to cuBLAS 0.5 exceeds 0.0083");
        // Floors: 8192^3 is 1.1 TFLOP; at 989 TFLOP/s that is 1112 µs, at the measured 758 TFLOP/s 1450 µs.
        assertContains(md,
                "| 8192 × 8192 × 8192 | nk | 1.10 | 1500 (1470–1560) | 1450 (1421–1508) | 1450 | 1112 | 96.7% | 74.1% | 1 |",
                "![GEMM TFLOP/s per shape, Iris and cuBLAS](" + GemmDocument.TFLOPS_PNG + ")",
                "[gemm-sweep.json](gemm-sweep.json)",
                "bin/iris-bench gemm\n# which ran:\njava -cp");
        assertTrue(Files.size(out.resolve(ReportKind.GEMM.sweepFile())) > 0);
        assertEquals(s, StoredResult.read(out.resolve(ReportKind.GEMM.sweepFile()), GemmSweepResult.class), "the JSON round trip keeps every field");
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
        String md = report(sweep(), dir, "--findings", f.toString());
        assertTrue(md.indexOf("## Findings") > md.indexOf("## Target") && md.indexOf("## Findings") < md.indexOf("## Chart"), md);
    }

    /** {@code sweep} written to in.json and reported into {@code out} with {@code args} added, which must exit 0: its markdown. */
    private String report(GemmSweepResult sweep, Path out, String... args) throws IOException {
        Path json = dir.resolve("in.json");
        sweep.write(json);
        List<String> all = new ArrayList<>(List.of("report", "gemm", "--sweep", json.toString(), "--out", out.toString()));
        all.addAll(List.of(args));
        assertEquals(0, IrisBench.commandLine().execute(all.toArray(String[]::new)));
        return Files.readString(out.resolve(GemmDocument.MARKDOWN));
    }

    @Test
    void unreadableInputIsExitOne() throws IOException {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{not json");
        assertEquals(1, IrisBench.commandLine().execute("report", "gemm", "--sweep", bad.toString(), "--out", dir.resolve("o").toString()));
        assertEquals(2, IrisBench.commandLine().execute("report", "gemm", "--out", dir.toString()));
    }
}

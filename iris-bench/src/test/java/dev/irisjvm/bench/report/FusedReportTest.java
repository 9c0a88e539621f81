package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import dev.irisjvm.kernels.fused.FusedOp;
import dev.irisjvm.kernels.fused.FusedVariant;
import dev.irisjvm.kernels.fused.TileTrace;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fused report from a synthetic sweep with known answers: speedups, verdicts, floors, AUTO, pictures, the JSON round trip. */
class FusedReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @TempDir
    Path dir;

    private static FusedMeasurement m(String op, String shape, String impl, String variant, boolean auto, double us, String check) {
        String[] p = shape.split("x");
        return new FusedMeasurement(op, shape, Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2]), 2, impl, variant,
                auto, 30, us, us * 0.98, us * 1.05, List.of(us * 0.99, us), 1e12, 64.0 * (1 << 20), check);
    }

    /**
     * all-reduce 4096^3: baseline 600 µs, epilogue 420 (1.429×), spare warps 380 (1.579×, AUTO) → PASS
     * against 1.5; all-scatter 8192^3: baseline 1000, sequential 900 (AUTO, 1.111×), spare warps 850
     * (1.176×) → FAIL against 1.25, AUTO not the fastest; all-gather 1024x3584x8192: no baseline.
     */
    static FusedSweepResult sweep() {
        List<FusedMeasurement> ms = new ArrayList<>();
        String ar = "all_reduce";
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.CUBLAS, "", false, 300, ""));
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.IRIS_GEMM, "", false, 310, ""));
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.NCCL, "", false, 290, ""));
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.BASELINE, "", false, 600, FusedMeasurement.REFERENCE));
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.FUSED, "epilogue", false, 420, "ok"));
        ms.add(m(ar, "4096x4096x4096", FusedMeasurement.FUSED, "spare_warps", true, 380, "ok"));
        String as = "all_scatter";
        ms.add(m(as, "8192x8192x8192", FusedMeasurement.CUBLAS, "", false, 700, ""));
        ms.add(m(as, "8192x8192x8192", FusedMeasurement.BASELINE, "", false, 1000, FusedMeasurement.REFERENCE));
        ms.add(m(as, "8192x8192x8192", FusedMeasurement.FUSED, "sequential", true, 900, "ok"));
        ms.add(m(as, "8192x8192x8192", FusedMeasurement.FUSED, "spare_warps", false, 850, "ok"));
        String ag = "all_gather";
        ms.add(FusedMeasurement.failed(ag, "1024x3584x8192", 1024, 3584, 8192, 2, FusedMeasurement.BASELINE, "", "not measured (--no-baseline)"));
        ms.add(m(ag, "1024x3584x8192", FusedMeasurement.FUSED, "spare_warps", true, 60, "not checked (--no-baseline)"));
        List<FusedSweepResult.Trace> traces = List.of(new FusedSweepResult.Trace(ar, "4096x4096x4096", "spare_warps",
                "fused-trace-all_reduce-spare_warps.json", List.of(new FusedSweepResult.RankSummary(0, 8, 8, 4, 100, 80, 40, 30),
                new FusedSweepResult.RankSummary(1, 8, 8, 4, 101, 81, 41, 31))));
        return new FusedSweepResult("2026-12-01T10:00:00Z", "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)", "CUDA 13.0, Java 17",
                "bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep", 2, 5, 30, 8, ms, traces);
    }

    /** A small synthetic trace of two ranks (as the kernels lay records out), written where the report expects it. */
    /** The test sweep as dir/in.json, its trace beside it. */
    private Path sweepWithTrace() throws IOException {
        writeTrace(dir);
        Path sweepFile = dir.resolve("in.json");
        sweep().write(sweepFile);
        return sweepFile;
    }

    private void writeTrace(Path folder) throws IOException {
        int tiles = 2;
        List<TileTrace> ranks = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            long[] r = new long[tiles * 6 * 4];
            for (int t = 0; t < tiles; t++) {
                for (int c = 0; c < 2; c++) {
                    for (int kind = 0; kind < 2; kind++) {
                        int slot = ((t * 2 + c) * 2 + kind) * 4;
                        r[slot] = 1_000_000 + t * 10_000 + kind * 5_000;
                        r[slot + 1] = r[slot] + 5_000;
                        r[slot + 2] = t | (long) (t + 3) << 32;
                        r[slot + 3] = kind | (long) c << 8;
                    }
                }
            }
            int slot = (tiles * 4) * 4;
            r[slot] = 1_006_000;
            r[slot + 1] = 1_012_000;
            r[slot + 2] = 3L << 32;
            r[slot + 3] = 2;
            ranks.add(new TileTrace(FusedOp.ALL_REDUCE, FusedVariant.SPARE_WARPS, rank, 2, 4096, 4096, 2048, tiles, 0, 132, r));
        }
        TileTrace.writeChromeJson(ranks, folder.resolve("fused-trace-all_reduce-spare_warps.json"));
    }

    @Test
    void rowsSpeedupsAndVerdicts() {
        FusedDocument d = new FusedDocument(sweep(), Document.Context.of(BenchmarkTargets.builtIn()));
        List<FusedDocument.Row> rows = d.rows();
        assertEquals(3, rows.size());
        FusedDocument.Row ar = rows.get(0);
        assertEquals("spare_warps", ar.best().variant());
        assertEquals(600.0 / 380, ar.speedup(ar.best()), 1e-12);
        assertEquals(1.5, ar.target());
        assertEquals(Math.max(300, 64.0 * (1 << 20) / (370 * 1e3)), ar.floorUs(), 1e-9);
        FusedDocument.Row as = rows.get(1);
        assertEquals("spare_warps", as.best().variant());
        assertEquals("sequential", as.auto().variant());
        assertTrue(Double.isNaN(rows.get(2).speedup(rows.get(2).best())));
    }

    @Test
    void writesMarkdownChartsAndTimelines() throws IOException {
        Path sweepFile = sweepWithTrace();
        Path out = dir.resolve("out");
        int code = IrisBench.commandLine().execute("report", "fused", "--sweep", sweepFile.toString(), "--out", out.toString(), "--run-command", "bin/iris-bench fused -n 2");
        String md = Files.readString(out.resolve(FusedDocument.MARKDOWN));
        assertContains(md,
                "| GEMM + all-reduce | 4096 × 4096 × 4096 | ≥ 1.50× | 380 (spare_warps) | 600 | 1.579× | PASS | spare_warps | 1.579× |",
                "| GEMM + all-scatter | 8192 × 8192 × 8192 | ≥ 1.25× | 850 (spare_warps) | 1000 | 1.176× | **FAIL** | sequential | 1.111× |",
                "| all-gather + GEMM | 1024 × 3584 × 8192 | ≥ 1.30× | 60.0 (spare_warps) | — | — | not measured |",
                "1 of 2 targets met.",
                "picks the fastest measured variant at 1 of 2 shapes",
                "[json.gz](fused-trace-all_reduce-spare_warps.json.gz)");
        assertTrue(Files.exists(out.resolve("fused-trace-all_reduce-spare_warps.json.gz")), "trace gzipped next to the report");
        // The stored trace reads back as the one written.
        assertEquals(ChromeTrace.read(dir.resolve("fused-trace-all_reduce-spare_warps.json")).bars(),
                ChromeTrace.read(out.resolve("fused-trace-all_reduce-spare_warps.json.gz")).bars());
        assertTrue(Files.exists(out.resolve(ReportKind.FUSED.sweepFile())));
        if (code == 0) {
            for (String png : new String[] {FusedDocument.SPEEDUP_PNG, "fused-trace-all_reduce-spare_warps.png"}) {
                try (InputStream in = Files.newInputStream(out.resolve(png))) {
                    assertArrayEquals(PNG_SIGNATURE, in.readNBytes(8), png);
                }
            }
            assertTrue(md.contains("![GEMM + all-reduce spare_warps timeline](fused-trace-all_reduce-spare_warps.png)"), md);
        } else {
            assertEquals(Report.EXIT_NO_CHARTS, code, "only a missing java.desktop may keep the pictures out");
        }
        assertFalse(md.contains("NaN |") || md.contains("| NaN") || md.contains("NaN×") || md.contains("NaN%"), md);
    }

    /**
     * The GPU host's runtime (bin/gpu-bundle's jlink modules) has no java.desktop: there the report
     * must still store the traces and write the document, and exit with EXIT_NO_CHARTS. Loading the
     * drawing class to name a trace file once ended it with NoClassDefFoundError instead.
     */
    @Test
    void writesTheDocumentOnARuntimeWithoutJavaDesktop() throws Exception {
        Path sweepFile = sweepWithTrace();
        Path out = dir.resolve("out");
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(java, "--limit-modules",
                "java.base,java.logging,java.management,jdk.management,jdk.unsupported,java.xml,java.naming,java.sql,jdk.zipfs",
                "-cp", System.getProperty("java.class.path"), IrisBench.class.getName(), "report", "fused", "--sweep", sweepFile.toString(),
                "--out", out.toString(), "--run-command", "bin/iris-bench fused -n 2").redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(Report.EXIT_NO_CHARTS, p.exitValue(), output);
        assertTrue(Files.readString(out.resolve(FusedDocument.MARKDOWN)).contains("[json.gz](fused-trace-all_reduce-spare_warps.json.gz)"));
        assertTrue(Files.exists(out.resolve("fused-trace-all_reduce-spare_warps.json.gz")), output);
    }

    @Test
    void reportOnlyReplacesItsPlainTraceCopyWithTheGzippedOne() throws IOException {
        Path out = dir.resolve("out");
        Files.createDirectories(out);
        writeTrace(out);  // a report folder from before the traces were stored gzipped
        Path sweepFile = out.resolve(ReportKind.FUSED.sweepFile());
        sweep().write(sweepFile);
        IrisBench.commandLine().execute("report", "fused", "--sweep", sweepFile.toString(), "--out", out.toString(), "--run-command", "bin/iris-bench fused -n 2");
        assertTrue(Files.exists(out.resolve("fused-trace-all_reduce-spare_warps.json.gz")));
        assertFalse(Files.exists(out.resolve("fused-trace-all_reduce-spare_warps.json")));
        IrisBench.commandLine().execute("report", "fused", "--sweep", sweepFile.toString(), "--out", out.toString(), "--run-command", "bin/iris-bench fused -n 2");
        assertTrue(Files.readString(out.resolve(FusedDocument.MARKDOWN)).contains("[json.gz](fused-trace-all_reduce-spare_warps.json.gz)"));
    }

    /**
     * Issue 26's small-M table: all-reduce at M 8 passes both targets (75 ÷ 45 = 1.667 over cuBLAS
     * → NCCL, 60 ÷ 45 = 1.333 over cuBLAS → Iris), at M 64 fails the second (1.290 and 1.065), at M
     * 128 has none; reduce-scatter at M 8 did not run. The baselines' GEMM is cuBLASLt, faster than
     * cublasGemmEx alone, and a failed check of the second baseline is listed.
     */
    static FusedSweepResult smallMSweep() {
        List<FusedMeasurement> ms = new ArrayList<>();
        String ar = "all_reduce";
        double[][] times = {{8, 75, 60, 45}, {64, 80, 66, 62}, {128, 90, 85, 80}};
        for (double[] t : times) {
            String shape = (int) t[0] + "x8192x28672";
            ms.add(m(ar, shape, FusedMeasurement.CUBLAS, "", false, 60, ""));
            ms.add(m(ar, shape, FusedMeasurement.CUBLASLT, "", false, 50, "ok"));
            ms.add(m(ar, shape, FusedMeasurement.IRIS_GEMM, "", false, 55, ""));
            ms.add(m(ar, shape, FusedMeasurement.IRIS_CCL, "one_shot", false, 8, ""));
            ms.add(m(ar, shape, FusedMeasurement.NCCL, "", false, 20, ""));
            ms.add(m(ar, shape, FusedMeasurement.BASELINE, FusedMeasurement.CUBLASLT, false, t[1], FusedMeasurement.REFERENCE));
            ms.add(m(ar, shape, FusedMeasurement.BASELINE_IRIS, FusedMeasurement.CUBLASLT, false, t[2], t[0] == 128 ? "relative difference to cuBLAS + NCCL 0.5 exceeds 0.01" : "ok"));
            ms.add(m(ar, shape, FusedMeasurement.FUSED, "epilogue", false, t[3] + 5, "ok"));
            ms.add(m(ar, shape, FusedMeasurement.FUSED, "spare_warps", true, t[3], "ok"));
        }
        ms.add(FusedMeasurement.failed("reduce_scatter", "8x8192x28672", 8, 8192, 28672, 2, FusedMeasurement.FUSED, "",
                FusedMeasurement.UNSPLITTABLE + "M = 8 is not a multiple of 128 x 2"));
        return new FusedSweepResult("2026-12-05T10:00:00Z", "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)",
                "CUDA 13.0, cuBLAS 13.1.0, cuBLASLt 13.1.0 (32 MiB workspace), NCCL 2.28.3, Java 17",
                "bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --small-m", 2, 5, 30, 8, ms,
                List.of());
    }

    @Test
    void smallMTableJudgesBothBaselines() throws IOException {
        FusedDocument d = new FusedDocument(smallMSweep(), Document.Context.of(BenchmarkTargets.builtIn()));
        FusedDocument.Row first = d.rows().get(0);
        assertEquals(FusedMeasurement.CUBLASLT, first.vendorGemm().impl());
        assertEquals(Math.max(50, 64.0 * (1 << 20) / (370 * 1e3)), first.floorUs(), 1e-9);
        assertTrue(d.rows().get(3).unsplittable());
        Path sweepFile = dir.resolve("small.json");
        smallMSweep().write(sweepFile);
        Path out = dir.resolve("out");
        IrisBench.commandLine().execute("report", "fused", "--sweep", sweepFile.toString(), "--out", out.toString(),
                "--run-command", "bin/iris-bench fused -n 2 -- --small-m");
        String md = Files.readString(out.resolve(FusedDocument.MARKDOWN));
        assertContains(md,
                "## Small M",
                "| GEMM + all-reduce | 8 × 8192 × 28672 | 45.0 (spare_warps) | 75.0 | 1.667× | 60.0 | 1.333× | ≥ 1.30× / ≥ 1.10× | PASS | 50.0 (cublaslt) | 0.90× | 55.0 | 20.0 | 8.00 (one_shot) |",
                "| GEMM + all-reduce | 64 × 8192 × 28672 | 62.0 (spare_warps) | 80.0 | 1.290× | 66.0 | 1.065× | ≥ 1.30× / ≥ 1.10× | **FAIL** |",
                "| GEMM + all-reduce | 128 × 8192 × 28672 | 80.0 (spare_warps) | 90.0 | 1.125× | 85.0 | 1.063× | — | no target |",
                "| GEMM + reduce-scatter | 8 × 8192 × 28672 | — | — | — | — | — | ≥ 1.30× / ≥ 1.10× | not run: M = 8 is not a multiple of 128 x 2 |",
                "1 of 2 targets met.",
                "the faster of `cublasGemmEx` (default algorithm) and cuBLASLt",
                "- all_reduce 128x8192x28672 baseline_iris: relative difference to cuBLAS + NCCL 0.5 exceeds 0.01");
        assertFalse(md.contains("reduce_scatter 8x8192x28672 :"), "an unsplittable shape is no failed check");
    }

    /**
     * NCCL on its windows: the speedups are over the faster of the two NCCL baselines whose check
     * passed (all-reduce 4096^3: 600 µs plain, 500 on windows: spare warps at 380 is 1.316×, not 1.579×),
     * and the header says which baseline it is.
     */
    @Test
    void theFasterNcclBaselineJudges() {
        List<FusedMeasurement> ms = new ArrayList<>(sweep().measurements());
        ms.add(m("all_reduce", "4096x4096x4096", FusedMeasurement.BASELINE_WINDOW, "cublas", false, 500, "ok"));
        ms.add(m("all_scatter", "8192x8192x8192", FusedMeasurement.BASELINE_WINDOW, "cublas", false, 800, "relative difference 0.5"));
        FusedSweepResult s = sweep();
        FusedDocument doc = new FusedDocument(new FusedSweepResult(s.date(), s.hardware(), s.software(), s.command(), 2, s.warmup(),
                s.reps(), s.groupM(), ms, List.of()), Document.Context.of(BenchmarkTargets.builtIn()));
        List<FusedDocument.Row> rows = doc.rows();
        FusedDocument.Row ar = rows.stream().filter(r -> r.op().equals("all_reduce")).findFirst().orElseThrow();
        assertEquals(FusedMeasurement.BASELINE_WINDOW, ar.ncclBaseline().impl());
        assertEquals(500.0 / 380, ar.speedup(ar.best()), 1e-9);
        FusedDocument.Row as = rows.stream().filter(r -> r.op().equals("all_scatter")).findFirst().orElseThrow();
        assertEquals(FusedMeasurement.BASELINE, as.ncclBaseline().impl(), "a window baseline whose check failed does not judge");
        String md = doc.markdown(new Charts(dir, ReportKind.FUSED));
        assertContains(md, "the faster per shape of NCCL on plain buffers and on window-registered ones");
        assertFalse(md.contains("Not in this run, though issue 29 asks for it: NCCL on"), "the windows ran");
    }

    /** One rank: the collectives move nothing, so the table shows the GEMM part and judges nothing. */
    @Test
    void smallMOnOneRankJudgesNothing() throws IOException {
        FusedSweepResult two = smallMSweep();
        List<FusedMeasurement> one = two.measurements().stream().map(m -> new FusedMeasurement(m.op(), m.shape(), m.m(), m.n(), m.k(),
                1, m.impl(), m.variant(), m.auto(), m.reps(), m.medianUs(), m.minUs(), m.maxUs(), m.rankMedianUs(), m.flopsPerRank(),
                m.nvlinkBytes(), m.check())).toList();
        FusedSweepResult sweep = new FusedSweepResult(two.date(), two.hardware(), two.software(), two.command(), 1, two.warmup(),
                two.reps(), two.groupM(), one, List.of());
        String md = new FusedDocument(sweep, Document.Context.of(BenchmarkTargets.builtIn())).markdown(new Charts(dir, ReportKind.FUSED));
        assertContains(md, "| 8 × 8192 × 28672 | 45.0 (spare_warps) | 75.0 | 1.667× | 60.0 | 1.333× | ≥ 1.30× / ≥ 1.10× | one rank: not judged |",
                "This run had one rank");
        assertFalse(md.contains("PASS"), md);
    }

    @Test
    void jsonRoundTrip() throws IOException {
        Path f = dir.resolve("s.json");
        sweep().write(f);
        FusedSweepResult back = StoredResult.read(f, FusedSweepResult.class);
        assertEquals(sweep().measurements(), back.measurements());
        assertEquals(sweep().traces(), back.traces());
    }

    @Test
    void timelineReadsTheKernelsTrace() throws IOException {
        writeTrace(dir);
        ChromeTrace t = ChromeTrace.read(dir.resolve("fused-trace-all_reduce-spare_warps.json"));
        assertEquals(2, t.processes().size());
        assertEquals(2 * (8 + 1), t.bars().size());
        assertEquals(20.0, t.end(), 1e-9);  // 1_000_000 .. 1_020_000 ns per rank, each from its first record
        assertEquals(5.0, TraceTimeline.niceStep(4.2));
        assertEquals(0.2, TraceTimeline.niceStep(0.15), 1e-12);
    }
}

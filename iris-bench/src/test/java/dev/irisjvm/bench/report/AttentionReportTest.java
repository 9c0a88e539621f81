package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.AttentionBenchResult.Conventional;
import dev.irisjvm.bench.results.AttentionBenchResult.DecodePoint;
import dev.irisjvm.bench.results.AttentionBenchResult.HbmCopy;
import dev.irisjvm.bench.results.AttentionBenchResult.LocalPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.RingPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.Sdpa;
import dev.irisjvm.bench.results.AttentionBenchResult.SdpaPoint;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attention report from a synthetic run with known answers (the numbers below are made up for
 * the test, never published): each target's verdict, the not-judged cases, the SDPA file as
 * attention_sdpa.py writes it, the JSON round trip, and runs written before the conventional
 * flash-decode path was measured.
 */
class AttentionReportTest {
    @TempDir
    Path dir;

    /**
     * Local: 4K Iris 600 vs SDPA 700 TFLOP/s (0.857, pass), 4K causal 400 vs 600 (0.667, fail), 16K
     * without SDPA (not judged). Ring: 32K ring 10.2 ms vs steps 10.0 / local 9.9 (1.030, pass) and
     * all-gather 11 (pass); 128K causal ring 110 vs steps 100 (1.10, fail) and all-gather 105 (fail).
     * Decode, against the conventional path: 1.5x (pass), 1.1x (fail), one whose conventional output
     * check failed, and one without the conventional path (not judged). The HBM copy: 1 GiB in 200 µs
     * (10.7 TB/s through HBM), so the floors are 6.25 µs for 64 MiB of K/V per rank (B 1, 16K per
     * rank: bound 22.19, fused 20, pass), 800 µs for 8 GiB (bound 935, fused 1000, fail) and 12.5 µs
     * for 128 MiB (bound 29.375, fused 30, fail).
     */
    static AttentionBenchResult run() {
        Sdpa sdpa = new Sdpa("2.11.0+cu130", "13.0", "NVIDIA H200", "bf16", 1, 32, 8, 128, 3, 10, List.of(
                new SdpaPoint("default", 4096, false, "enable_gqa", 10, 100.0, 99.0, 101.0, 700.0, null),
                new SdpaPoint("default", 4096, false, "expanded", 10, 140.0, 139.0, 141.0, 500.0, null),
                new SdpaPoint("flash", 4096, false, null, 0, null, null, null, null, "enable_gqa: RuntimeError: no; expanded: RuntimeError: no"),
                new SdpaPoint("cudnn", 4096, false, "enable_gqa", 10, 100.0, 99.0, 101.0, 610.0, null),
                new SdpaPoint("default", 4096, true, "expanded", 10, 100.0, 99.0, 101.0, 600.0, null),
                new SdpaPoint("cudnn", 4096, true, "enable_gqa", 10, 100.0, 99.0, 101.0, 650.0, null)));
        List<LocalPoint> local = List.of(new LocalPoint("bf16", 1, 32, 8, 4096, 128, false, 10, 100, 99, 101, 680, null),
                new LocalPoint("bf16", 1, 32, 8, 4096, 128, true, 10, 100, 99, 101, 400, null),
                new LocalPoint("bf16", 1, 32, 8, 16384, 128, false, 10, 100, 99, 101, 650, null));
        long shardKv = 8L * 16384 * 128 * 2;
        List<RingPoint> ring = List.of(
                new RingPoint("bf16", 1, 32, 8, 128, false, 32768, 16384, "CONTIGUOUS", 10, 10_200, 10_000, 9_900, 11_000, 500,
                        6 * shardKv, 6 * shardKv, 500, "ok: max |ring - all-gather| 0.001"),
                new RingPoint("bf16", 1, 32, 8, 128, true, 131072, 65536, "ZIG_ZAG", 10, 110_000, 100_000, 0, 105_000, 2_000,
                        6 * 4 * shardKv, 6 * 4 * shardKv, 300, "FAIL: max |ring - all-gather| 3"));
        List<DecodePoint> decode = List.of(
                new DecodePoint("bf16", 1, 32, 8, 128, 32768, 16384, 256, 64, 50, 20, new Conventional(30, 2, 3, 4, "ok: within"), 45, 12,
                        10, 5, "ok"),
                new DecodePoint("bf16", 8, 32, 8, 128, 524288, 262144, 1024, 256, 50, 1000, new Conventional(1100, 20, 30, 40, "ok"), 1300,
                        900, 100, 50, "ok"),
                new DecodePoint("bf16", 8, 32, 8, 128, 65536, 32768, 1024, 32, 50, 10, new Conventional(100, 2, 3, 4,
                        "FAIL: max |conventional - fused| 1 > 2^-6 max |o|"), 100, 9, 50, 5, "ok"),
                new DecodePoint("bf16", 1, 32, 8, 128, 65536, 32768, 512, 64, 50, 30, null, 50, 20, 12, 6, "ok"));
        return new AttentionBenchResult("2026-12-01T10:00:00Z", "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)", "CUDA 13.0, NCCL 2.28.3, Java 17",
                "bin/iris-run -n 2 -- java ... AttentionBench", 2, 2, sdpa, local, ring, decode, new HbmCopy(1L << 30, 200));
    }

    private static String status(List<AttentionDocument.Verdict> vs, String target, String config) {
        return vs.stream().filter(v -> v.target().startsWith(target) && v.config().equals(config)).map(AttentionDocument.Verdict::status)
                .findFirst().orElseThrow(() -> new AssertionError("no verdict for " + target + " / " + config + " in " + vs));
    }

    @Test
    void verdicts() {
        List<AttentionDocument.Verdict> vs = new AttentionDocument(run(), Document.Context.of(BenchmarkTargets.builtIn())).verdicts();
        assertEquals("PASS", status(vs, "local", "S 4K"));   // 680 against the default backend's 700, the faster one there
        assertEquals("**FAIL**", status(vs, "local", "S 4K causal"));
        assertTrue(vs.stream().anyMatch(v -> v.config().equals("S 4K causal") && v.measured().contains("400 vs 650 TFLOP/s (cudnn)")), vs.toString());
        assertEquals("not judged", status(vs, "local", "S 16K"));
        assertEquals("PASS", status(vs, "ring ≤ 1.05", "S 32K, 2 ranks"));
        assertEquals("PASS", status(vs, "ring ≤ all-gather", "S 32K, 2 ranks"));
        assertEquals("**FAIL**", status(vs, "ring ≤ 1.05", "S 128K causal, 2 ranks"));
        assertEquals("**FAIL**", status(vs, "ring ≤ all-gather", "S 128K causal, 2 ranks"));
        assertEquals("PASS", status(vs, "K/V per rank", "S 128K causal, 2 ranks"));
        assertEquals("**FAIL**", status(vs, "ring output", "S 128K causal, 2 ranks"));
        assertEquals("PASS", status(vs, "flash-decode ≥ 1.2× over the conventional path", "B 1, KV 32K (16K per rank)"));
        assertEquals("**FAIL**", status(vs, "flash-decode", "B 8, KV 512K (256K per rank)"));
        assertEquals("**FAIL** (output check)", status(vs, "flash-decode", "B 8, KV 64K (32K per rank)"));
        assertEquals("not judged", status(vs, "flash-decode", "B 1, KV 64K (32K per rank)"));
    }

    /** Each point against its floor: the K/V bytes per rank at the run's HBM copy bandwidth, x 1.15, + 15 µs. */
    @Test
    void decodeIsJudgedByItsFloor() throws Exception {
        AttentionBenchResult r = run();
        assertEquals(64L << 20, r.decode().get(0).kvBytesPerRank());
        assertEquals(2.0 * (1L << 30) / 200e3, r.hbmCopy().gbps(), 1e-9);
        List<AttentionDocument.Verdict> vs = new AttentionDocument(r, Document.Context.of(BenchmarkTargets.builtIn())).verdicts();
        String floor = "flash-decode ≤ 1.15 × K/V bytes ÷ HBM copy bandwidth + 15.0 µs";
        assertEquals("PASS", status(vs, floor, "B 1, KV 32K (64 MiB per rank)"));
        assertEquals("**FAIL**", status(vs, floor, "B 8, KV 512K (8 GiB per rank)"));
        assertEquals("**FAIL** (output check)", status(vs, floor, "B 8, KV 64K (1 GiB per rank)"));
        assertEquals("**FAIL**", status(vs, floor, "B 1, KV 64K (128 MiB per rank)"));
        assertTrue(vs.stream().anyMatch(v -> v.measured().equals("20.0 vs 22.2 µs (floor 6.25)")), vs.toString());
        String md = report(r, "floor").md();
        assertContains(md, "a device-to-device copy of 1 GiB took 200 µs in this run",
                "| batch | KV tokens (per rank) | K/V bytes per rank | floor µs | fused µs | fused ÷ floor | read GB/s |",
                "| 1 | 32K (16K) | 64 MiB | 6.25 | 20.0 | 3.200× |");
    }

    /** The speedups: over the conventional path (NaN where it was not measured) and over the all-partials path. */
    @Test
    void decodeSpeedups() {
        List<DecodePoint> d = run().decode();
        assertEquals(1.5, d.get(0).speedup(), 1e-12);
        assertEquals(2.25, d.get(0).allPartialsSpeedup(), 1e-12);
        assertTrue(Double.isNaN(d.get(3).speedup()));
        assertTrue(d.get(0).checksPassed());
        assertTrue(!d.get(2).checksPassed(), "the conventional check failed");
        assertTrue(d.get(3).checksPassed(), "no conventional check to fail");
    }

    /**
     * The README's item: speedups over the conventional path per batch (the point without it gives
     * none), and how far each batch meets the target (batch 8's first point failed its check).
     */
    @Test
    void statusItemJudgesAgainstTheConventionalPath() {
        String item = new AttentionStatus(new RunSource("attention-bench.json", run().date(), "d2bf84f"), run(), BenchmarkTargets.builtIn())
                .item("docs/benchmarks");
        assertTrue(item.contains("a local kernel, head size 128, at "), item);  // the benchmark takes one head size a run
        assertTrue(item.contains("distributed flash-decode 1.500× at batch 1 and 1.100–10.000× at batch 8 over the conventional "
                + "partial + merge + NCCL all-gather + combine (16K, 32K, 256K tokens per rank), the 1.20× target met at batch 1 up to "
                + "16K tokens per rank and not at batch 8; within its floor target (fused time ≤ 1.15 × the K/V bytes per rank at the "
                + "HBM copy bandwidth of the same run, 10737 GB/s, + 15.0 µs) at 1 of 4 points, fused ÷ floor 0.100–3.200×"), item);
    }

    /**
     * A decode-only run on one rank (README's second attention item): headed flash-decode, no
     * speedup target (nothing is exchanged), the floor judged; without the HBM copy, no floor clause.
     */
    @Test
    void statusItemOfADecodeOnlyRunOnOneRank() {
        AttentionBenchResult r = run();
        AttentionBenchResult oneRank = new AttentionBenchResult(r.date(), "1 x NVIDIA H100", r.software(), r.command(), 1, 2, null, List.of(),
                List.of(), r.decode(), r.hbmCopy());
        RunSource source = new RunSource("attention-decode.json", r.date(), "c89fea2");
        String item = new AttentionStatus(source, oneRank, BenchmarkTargets.builtIn()).item("docs/benchmarks");
        assertTrue(item.startsWith("- flash-decode ([attention.md](docs/benchmarks/attention.md)): on one rank 1.500× at batch 1"), item);
        assertTrue(item.contains("at 1 of 4 points, fused ÷ floor 0.100–3.200×"), item);
        assertTrue(!item.contains("target met"), item);
        AttentionBenchResult noCopy = new AttentionBenchResult(r.date(), "1 x NVIDIA H100", r.software(), r.command(), 1, 2, null, List.of(),
                List.of(), r.decode(), null);
        assertTrue(!new AttentionStatus(source, noCopy, BenchmarkTargets.builtIn()).item("docs/benchmarks").contains("floor"), item);
    }

    /**
     * A run written before the conventional path was measured: its all-partials time is "baselineUs",
     * and it is judged, tabled and described against that path, as it was when written.
     */
    @Test
    void readsAndReportsARunWithoutTheConventionalPath() throws Exception {
        Path json = dir.resolve("old.json");
        Files.writeString(json, """
                {"date": "2026-12-01T10:00:00Z", "hardware": "2 x NVIDIA H200", "software": "CUDA 13.0", "command": "x", "world": 2,
                 "warmup": 2, "sdpa": null, "local": [], "ring": [],
                 "decode": [{"dtype": "bf16", "batch": 1, "qHeads": 32, "kvHeads": 8, "headDim": 128, "totalLen": 32768,
                             "lenPerRank": 16384, "chunkLen": 256, "chunks": 64, "reps": 50, "fusedUs": 20.0, "baselineUs": 30.0,
                             "partialUs": 12.0, "gatherUs": 10.0, "combineUs": 5.0,
                             "check": "ok: fused equals the baseline bit for bit (4096 elements)"}]}
                """);
        AttentionBenchResult old = StoredResult.read(json, AttentionBenchResult.class);
        DecodePoint p = old.decode().get(0);
        assertEquals(30.0, p.allPartialsUs());
        assertEquals(null, p.conventional());
        List<AttentionDocument.Verdict> vs = new AttentionDocument(old, Document.Context.of(BenchmarkTargets.builtIn())).verdicts();
        assertEquals("PASS", status(vs, "flash-decode ≥ 1.2× over partial + all-gather + combine", "B 1, KV 32K (16K per rank)"));
        assertEquals("not judged", status(vs, "flash-decode ≤", "B 1, KV 32K (64 MiB per rank)"));   // no HBM copy in that run
        int rc = IrisBench.commandLine().execute("report", "attention", "--sweep", json.toString(), "--out", dir.resolve("old").toString());
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        String md = Files.readString(dir.resolve("old").resolve(AttentionDocument.MARKDOWN));
        assertContains(md,
                "distributed flash-decode against partial + NCCL all-gather + combine, all measured",
                "against the baseline `partial` kernel + NCCL all-gather of the partials + `combine` kernel",
                "| 1 | 32K (16K) | 64 × 256 | 20.0 | 30.0 | 1.500× |",
                "decode: partial + NCCL all-gather + combine, the baseline before issue 29; this run predates the "
                        + "conventional unfused decode, its stronger baseline, pending the next two-GPU run");
        assertEquals(1, md.split("conventional", -1).length - 1, "only the header's baseline item speaks of the conventional path");
    }

    @Test
    void sdpaCountsItsFasterGqaForm() {
        AttentionDocument d = new AttentionDocument(run(), Document.Context.of(BenchmarkTargets.builtIn()));
        assertEquals(700.0, d.sdpa("default", 4096, false).tflops());
        assertEquals("expanded", d.sdpa("default", 4096, true).gqa());
        assertEquals(null, d.sdpa("flash", 4096, false).tflops());
        assertEquals(null, d.sdpa("cudnn", 16384, false));
        assertEquals("default", d.fastestSdpa(4096, false).backend());
        assertEquals("cudnn", d.fastestSdpa(4096, true).backend());
        assertEquals(null, d.fastestSdpa(16384, false), "no backend measured S 16K");
    }

    @Test
    void noCommReferenceIsTheFasterOne() {
        RingPoint p = run().ring().get(0);
        assertEquals(9_900, p.noCommUs());
        assertEquals(100_000, run().ring().get(1).noCommUs(), "no single launch measured: the steps");
    }

    /** A run of the local part alone (one GPU) reports the local targets and says the other parts did not run. */
    @Test
    void reportsARunOfTheLocalPartAlone() throws Exception {
        AttentionBenchResult full = run();
        String md = report(new AttentionBenchResult(full.date(), "1 x NVIDIA H200", full.software(), full.command(), 1, full.warmup(),
                full.sdpa(), full.local(), List.of(), List.of(), null), "local").md();
        assertTrue(md.contains("| local ≥ 0.95 × the fastest SDPA backend | S 4K causal |"), md);
        assertFalse(md.contains("flash-decode ≥"), md);
        assertContains(md, "## Ring attention\n\nNot run", "## Flash-decode\n\nNot run.", "decode: the conventional ");
        assertFalse(md.contains("predates"), "a run without decode predates nothing:\n" + md);
    }

    /** What {@code iris-bench report attention} returned and the Markdown it rendered. */
    private record Rendered(int rc, String md) {}

    /** {@code iris-bench report attention} on {@code run}'s JSON (dir/name.json), into dir/name, with the given options. */
    private Rendered report(AttentionBenchResult run, String name, String... options) throws IOException {
        Path json = dir.resolve(name + ".json");
        run.write(json);
        List<String> args = new ArrayList<>(List.of("report", "attention", "--sweep", json.toString(), "--out", dir.resolve(name).toString()));
        args.addAll(List.of(options));
        int rc = IrisBench.commandLine().execute(args.toArray(String[]::new));
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        return new Rendered(rc, Files.readString(dir.resolve(name).resolve(AttentionDocument.MARKDOWN)));
    }

    @Test
    void writesTheReportAndReadsBackTheJson() throws Exception {
        Rendered out = report(run(), "out", "--run-command", "bin/iris-bench attention -n 2");
        assertEquals(run(), StoredResult.read(dir.resolve("out.json"), AttentionBenchResult.class));
        String md = out.md();
        assertContains(md,
                "## Targets",
                "bin/iris-bench attention -n 2",
                "| S 4K causal |",
                "0.971×",
                "failed: enable_gqa: RuntimeError",
                "[attention-bench.json](attention-bench.json)",
                "distributed flash-decode against the conventional unfused decode",
                "- **baseline**: local: the fastest of PyTorch SDPA's backends measured in this run",
                "the same local kernel; decode: the conventional ",
                "| 1 | 32K (16K) | 64 × 256 | 20.0 | 30.0 | 1.500× | 12.0 | 2.00 | 3.00 | 4.00 | ok: within |",
                "| 1 | 64K (32K) | 64 × 512 | 30.0 | not measured |",
                "| 1 | 32K (16K) | 45.0 | 2.250× | 10.0 | 5.00 | ok |");
        assertTrue(Files.exists(dir.resolve("out").resolve(ReportKind.ATTENTION.sweepFile())));
        if (out.rc() == 0) {
            for (String png : List.of(AttentionDocument.LOCAL_PNG, AttentionDocument.RING_PNG, AttentionDocument.DECODE_PNG)) {
                assertTrue(Files.size(dir.resolve("out").resolve(png)) > 1000, png);
            }
        }
    }

    @Test
    void readsTheSdpaFileAsThePythonScriptWritesIt() throws Exception {
        Path f = dir.resolve("sdpa.json");
        Files.writeString(f, """
                {"torch": "2.11.0+cu130", "cuda": "13.0", "device": "NVIDIA H200", "dtype": "bf16", "batch": 1, "q_heads": 32,
                 "kv_heads": 8, "head_dim": 128, "warmup": 3, "reps": 10,
                 "points": [{"backend": "default", "seq": 4096, "causal": false, "gqa": "enable_gqa", "reps": 10,
                             "median_us": 250.5, "min_us": 249.0, "max_us": 260.0, "tflops": 548.6, "error": null},
                            {"backend": "cudnn", "seq": 4096, "causal": true, "gqa": null, "reps": 0, "median_us": null,
                             "min_us": null, "max_us": null, "tflops": null, "error": "enable_gqa: RuntimeError: x"}]}
                """);
        Sdpa s = AttentionBenchResult.readSdpa(f);
        assertEquals(32, s.qHeads());
        assertEquals(2, s.points().size());
        assertEquals(250.5, s.points().get(0).medianUs());
        assertEquals(null, s.points().get(1).tflops());
    }
}

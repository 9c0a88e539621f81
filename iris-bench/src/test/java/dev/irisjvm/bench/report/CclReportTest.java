package dev.irisjvm.bench.report;

import dev.irisjvm.bench.cli.IrisBench;
import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.TargetResult.Status;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongToDoubleFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The collectives report from synthetic sweeps with known answers: figures, targets, automatic choice, charts. */
class CclReportTest {
    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static final long KIB = 1L << 10;
    static final long MIB = 1L << 20;
    static final long[] SIZES = {KIB, 4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB};
    /** The sizes up to the sweep's default --one-call-max-bytes. */
    static final long[] SMALL = {KIB, 4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB};

    @TempDir
    Path dir;

    /** Per-rank collective measurements; rank 1 is 10% slower than rank 0 (the figure takes the slowest). */
    static final class Runs {
        final int world;
        final List<Measurement> ms = new ArrayList<>();

        Runs(int world) {
            this.world = world;
        }

        Runs add(String op, String impl, long[] sizes, LongToDoubleFunction usAt) {
            for (long bytes : sizes) {
                double us = usAt.applyAsDouble(bytes);
                if (Double.isNaN(us)) {
                    continue;
                }
                for (int r = 0; r < world; r++) {
                    double mine = r == 1 ? us : us / 1.1;
                    ms.add(new Measurement(op, impl, bytes, r, -1, 20, mine, mine * 0.9, mine * 1.2, bytes / (mine * 1e3), 0, "ok"));
                }
            }
            return this;
        }

        Runs add(Measurement m) {
            ms.add(m);
            return this;
        }

        SweepResult build(String extraArgs) {
            return new SweepResult("2026-12-01T10:00:00Z", world + " x Test GPU", "CUDA 13.0, NCCL 2.28.3, Java 17",
                    "bin/iris-run -n " + world + " -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.ccl.CclSweep --out /tmp/x.json "
                            + extraArgs, world, List.copyOf(ms));
        }
    }

    /** Time at which {@code bytes} move at {@code gbps} algorithm bandwidth, at least {@code floorUs}. */
    static LongToDoubleFunction at(double floorUs, double gbps) {
        return b -> Math.max(floorUs, b / (gbps * 1e3));
    }

    /**
     * Two ranks. A passes (auto 9 µs vs NCCL 20 µs: 2.22×), B fails at 64 KiB only, C passes (340 vs
     * 300 GB/s), D passes (230 vs 200), E fails at 4 MiB (reduce-scatter at 0.9×), F has no data.
     */
    static SweepResult twoRanks() {
        return new Runs(2)
                .add("all_reduce", "nccl", SIZES, at(20, 300))
                .add("all_reduce", "iris_one_shot", SIZES, b -> b > 4 * MIB ? Double.NaN : Math.max(8, b / 200e3))
                .add("all_reduce", "iris_two_shot", SIZES, at(12, 350))
                .add("all_reduce", "iris_ring", SIZES, at(30, 320))
                .add("all_reduce", "iris_atomic", SIZES, at(15, 150))
                .add("all_reduce", "iris_auto", SIZES, at(9, 340))
                .add("all_reduce", "nccl_graph", SIZES, at(10, 300))
                .add("all_reduce", "iris_one_shot_graph", SIZES, b -> b > 4 * MIB ? Double.NaN : Math.max(6, b / 200e3))
                .add("all_reduce", "iris_two_shot_graph", SIZES, at(9, 350))
                .add("all_reduce", "iris_auto_graph", SIZES, b -> b == 64 * KIB ? 11 : Math.max(6, b / 340e3))
                // one call from Java up to 256 KiB, where targets A and B judge it: the same times as back to back
                .add("all_reduce", "nccl_call", SMALL, at(20, 300))
                .add("all_reduce", "iris_one_shot_call", SMALL, b -> Math.max(8, b / 200e3))
                .add("all_reduce", "iris_auto_call", SMALL, at(9, 340))
                .add("all_reduce", "nccl_graph_call", SMALL, at(10, 300))
                .add("all_reduce", "iris_auto_graph_call", SMALL, b -> b == 64 * KIB ? 11 : Math.max(6, b / 340e3))
                .add("all_gather", "nccl", SIZES, at(15, 200))
                .add("all_gather", "iris", SIZES, at(7, 230))
                .add("all_gather", "nccl_graph", SIZES, at(8, 200))
                .add("all_gather", "iris_graph", SIZES, at(5, 230))
                .add("reduce_scatter", "nccl", SIZES, at(15, 200))
                .add("reduce_scatter", "iris", SIZES, b -> b == 4 * MIB ? 4 * MIB / (200e3 * 0.9) : Math.max(7, b / 210e3))
                .add("broadcast", "nccl", SIZES, at(10, 250))
                .add("broadcast", "iris", SIZES, at(6, 260))
                // rank 1's ring output at 1 MiB is wrong: the figure is gone, the cell says so
                .add(new Measurement("all_reduce", "iris_ring", MIB, 1, -1, 20, 40, 39, 41, 26, 0,
                        "rank 1's output vs NCCL's: 3 of 524288 elements differ by more than 0 (first at element 7)"))
                .add(new Measurement("all_reduce", "iris_ring", MIB, 0, -1, 20, 40, 39, 41, 26, 0, "ok"))
                .build("--dtype bf16 --reduce-op sum --graph-calls 10 --staging-bytes 16777216 --one-call-max-bytes 262144");
    }

    @Test
    void figuresTakeTheSlowestRankAndBusFactors() {
        SweepResult s = twoRanks();
        CclFigures f = new CclFigures(s.measurements(), 2);
        CclFigures.Figure ag = f.figure("all_gather", "iris", 16 * MIB).orElseThrow();
        assertEquals(16 * MIB / 230e3, ag.us(), 1e-9);              // rank 1's time, not rank 0's
        assertEquals(230, ag.algGbps(), 1e-9);
        assertEquals(115, ag.busGbps(), 1e-9);                       // (n-1)/n = 1/2
        assertEquals(340, f.figure("all_reduce", "iris_auto", 64 * MIB).orElseThrow().busGbps(), 1e-9);   // 2(n-1)/n = 1
        assertTrue(f.figure("all_reduce", "iris_ring", MIB).isEmpty());
        assertTrue(f.failed("all_reduce", "iris_ring", MIB));
        assertFalse(f.failed("all_reduce", "iris_ring", 4 * MIB));
        assertTrue(f.figure("all_reduce", "iris_one_shot", 16 * MIB).isEmpty());
        assertFalse(f.failed("all_reduce", "iris_one_shot", 16 * MIB));
        assertEquals(List.of("iris_one_shot", "iris_two_shot", "iris_ring", "iris_atomic", "iris_auto", "nccl",
                "iris_one_shot_graph", "iris_two_shot_graph", "iris_auto_graph", "nccl_graph"), f.impls("all_reduce"));
        assertEquals(List.of("all_reduce", "all_gather", "reduce_scatter", "broadcast"), f.ops());
    }

    @Test
    void busBandwidthFactorsAreNcclTests() {
        assertEquals(1.0, BusBandwidth.factor("all_reduce", 2));
        assertEquals(1.5, BusBandwidth.factor("all_reduce", 4));
        assertEquals(1.75, BusBandwidth.factor("all_reduce", 8));
        assertEquals(0.5, BusBandwidth.factor("all_gather", 2));
        assertEquals(0.875, BusBandwidth.factor("reduce_scatter", 8));
        assertEquals(2.0 / 3, BusBandwidth.factor("all_to_all", 3), 1e-15);
        assertEquals(1.0, BusBandwidth.factor("broadcast", 5));
        assertTrue(Double.isNaN(BusBandwidth.factor("load", 2)));
        assertEquals(450.0, BusBandwidth.busGbps("all_reduce", 4, 300.0), 1e-12);
        assertEquals("2(n-1)/n = 1.75", BusBandwidth.formula("all_reduce", 8));
    }

    @Test
    void targetsPassFailAndNotMeasured() {
        SweepResult s = twoRanks();
        CclTargets t = CclTargets.evaluate(new CclFigures(s.measurements(), 2), CclSettings.fromCommand(s.command()), BenchmarkTargets.builtIn().collectives());
        assertEquals(List.of(Status.PASS, Status.FAIL, Status.PASS, Status.PASS, Status.FAIL, Status.NOT_MEASURED),
                t.results().stream().map(TargetResult::status).toList());
        TargetResult a = t.results().get(0);
        assertEquals(20.0 / 9, a.ratio(), 1e-9);   // NCCL 20 µs ÷ iris_auto 9 µs, same at every size of the range
        TargetResult b = t.results().get(1);
        assertEquals(10.0 / 11, b.ratio(), 1e-9);
        assertTrue(b.measured().contains("64 KiB"), b.measured());
        assertEquals(340.0 / 300, t.results().get(2).ratio(), 1e-9);
        assertEquals(0.9, t.results().get(4).ratio(), 1e-9);
        assertTrue(t.results().get(5).source().contains("no all_to_all size"), t.results().get(5).source());
        // A covers 4, 16, 64 and 256 KiB; C the sizes from 8 MiB (16 and 64 MiB); E from 1 MiB (1, 4, 16, 64 MiB).
        assertEquals(4, t.rows().stream().filter(r -> r.spec().id().equals("A")).count());
        assertEquals(2, t.rows().stream().filter(r -> r.spec().id().equals("C")).count());
        assertEquals(4, t.rows().stream().filter(r -> r.spec().id().equals("E")).count());
        // the fastest algorithm is shown beside AUTO: one-shot at 4 KiB (20 ÷ 8 = 2.5×)
        CclTargets.Row a4 = t.rows().stream().filter(r -> r.spec().id().equals("A") && r.bytes() == 4 * KIB).findFirst().orElseThrow();
        assertEquals("iris_one_shot", a4.bestAlgorithm());
        assertEquals(2.5, a4.bestRatio(), 1e-9);
    }

    @Test
    void targetsNeedTheirTypeOpAndNccl() {
        SweepResult s = twoRanks();
        CclFigures f = new CclFigures(s.measurements(), 2);
        CclTargets f32 = CclTargets.evaluate(f, CclSettings.fromCommand("x CclSweep --dtype f32"), BenchmarkTargets.builtIn().collectives());
        assertEquals(Status.NOT_MEASURED, f32.results().get(0).status());
        assertEquals(Status.NOT_MEASURED, f32.results().get(1).status());
        assertEquals(Status.PASS, f32.results().get(2).status());
        CclTargets avg = CclTargets.evaluate(f, CclSettings.fromCommand("x CclSweep --reduce-op avg"), BenchmarkTargets.builtIn().collectives());
        assertEquals(Status.NOT_MEASURED, avg.results().get(2).status());
        assertEquals(Status.PASS, avg.results().get(3).status());    // all-gather does not reduce
        CclTargets noNccl = CclTargets.evaluate(f, CclSettings.fromCommand("x CclSweep --no-nccl"), BenchmarkTargets.builtIn().collectives());
        assertTrue(noNccl.results().stream().allMatch(r -> r.status() == Status.NOT_MEASURED));
        CclTargets empty = CclTargets.evaluate(new CclFigures(List.of(), 2), CclSettings.defaults(), BenchmarkTargets.builtIn().collectives());
        assertTrue(empty.results().stream().allMatch(r -> r.status() == Status.NOT_MEASURED && Double.isNaN(r.ratio())));
    }

    @Test
    void aMissingNcclSizeIsNotMeasuredAndAWrongIrisOutputFails() {
        Runs runs = new Runs(2)
                .add("all_to_all", "nccl", new long[] {MIB}, at(10, 200))
                .add("all_to_all", "iris", new long[] {MIB, 4 * MIB}, at(5, 250));
        CclTargets t = CclTargets.evaluate(new CclFigures(runs.build("").measurements(), 2), CclSettings.defaults(), BenchmarkTargets.builtIn().collectives());
        TargetResult f = t.results().get(5);
        assertEquals(Status.NOT_MEASURED, f.status());                // 4 MiB has no NCCL figure
        assertTrue(f.source().contains("not measured at 4 MiB"), f.source());
        assertEquals(2.0, f.ratio(), 1e-9);                           // 10 µs ÷ 5 µs at 1 MiB

        runs.add(new Measurement("all_to_all", "iris", 16 * MIB, 0, -1, 5, 50, 50, 50, 300, 0, "rank 0's output vs NCCL's: 1 of ..."))
                .add(new Measurement("all_to_all", "nccl", 16 * MIB, 0, -1, 5, 90, 90, 90, 180, 0, "ok"));
        t = CclTargets.evaluate(new CclFigures(runs.build("").measurements(), 2), CclSettings.defaults(), BenchmarkTargets.builtIn().collectives());
        assertEquals(Status.FAIL, t.results().get(5).status());
    }

    @Test
    void automaticChoiceFollowsTheFastestAlgorithm() {
        SweepResult s = twoRanks();
        CclFigures f = new CclFigures(s.measurements(), 2);
        List<AutoChoice.Winner> eager = AutoChoice.winners(f, false);
        assertEquals("one_shot: 1 KiB – 1 MiB; two_shot: 4 MiB – 64 MiB", AutoChoice.ranges(eager));
        assertEquals("one_shot: 1 KiB – 1 MiB; two_shot: 4 MiB – 64 MiB", AutoChoice.ranges(AutoChoice.winners(f, true)));
        String md = AutoChoice.section(f, CclSettings.fromCommand(s.command()));
        assertTrue(md.contains("| 4 KiB | one_shot | 8.00 | two_shot 12.0 µs (+50%)"), md);
        assertTrue(md.contains("8 MiB per rank"), md);   // 16 MiB staging / 2 ranks
    }

    @Test
    void wholeReportWithChartsAndRawData() throws IOException {
        SweepResult s = twoRanks();
        Path sweepFile = dir.resolve("sweep.json");
        s.write(sweepFile);
        String jmh = SyntheticRuns.jmhFile(SyntheticRuns.jmhEntry("dev.irisjvm.bench.jmh.CollectiveBenchmark.allReduce", "ss", 20,
                "{ \"bytes\" : \"4096\" }", 400.0, 380.0, "us/op"));
        Path jmh0 = Files.writeString(dir.resolve("jmh-rank0.json"), jmh);
        Path jmh1 = Files.writeString(dir.resolve("jmh-rank1.json"), "");
        Path out = dir.resolve("report");
        int rc = IrisBench.commandLine().execute("report", "ccl", "--sweep", sweepFile.toString(), "--jmh", jmh0.toString(), jmh1.toString(),
                "--out", out.toString(), "--run-command", "bin/iris-bench ccl -n 2", "--jmh-command", "bin/iris-run -n 2 -- sh -c ...");
        assertEquals(0, rc);
        String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
        assertTrue(Files.exists(out.resolve(ReportKind.CCL.sweepFile())));
        assertTrue(Files.exists(out.resolve("ccl-jmh-rank0.json")));
        assertFalse(Files.exists(out.resolve("ccl-jmh-rank1.json")));
        assertContains(md,
                "[ccl-sweep.json](ccl-sweep.json)",
                "bin/iris-bench ccl -n 2",
                "dev.irisjvm.bench.ccl.CclSweep --out",
                "jmh-rank1.json: empty",
                "CollectiveBenchmark.allReduce",
                "| A | all-reduce latency, one call from Java to its completion, both launched eagerly, 4 KiB – 256 KiB (bf16)",
                "| pass |",
                "| **FAIL** |",
                "| not measured |",
                "## all_reduce",
                "### all_reduce, replayed from a CUDA graph (10 calls per graph; time per call)");
        assertTrue(md.contains("| 1 MiB |") && md.contains("failed ⚠"), md);
        assertTrue(md.contains("## Automatic choice (all-reduce)"));
        assertTrue(md.contains("rank 1's output vs NCCL's: 3 of 524288"), md);
        assertTrue(md.contains("exact"), "2-rank bf16 sum must be stated as exact");
        assertTrue(md.contains("![All-reduce latency vs size](" + CclDocument.LATENCY_PNG + ")"));
        assertTrue(md.contains("![Bus bandwidth vs size](" + CclDocument.BUSBW_PNG + ")"));
        assertPng(out.resolve(CclDocument.LATENCY_PNG));
        assertPng(out.resolve(CclDocument.BUSBW_PNG));
        // the all_gather bus bandwidth at 16 MiB is half the algorithm bandwidth on 2 ranks
        assertTrue(md.contains("| 16 MiB | 115 | 100 | 230 | 200 |"), md);
    }

    /** A sweep of one rank (CclSweep checks its paths there) renders: bus bandwidth is 0, as nothing moves between GPUs; rank 0 is the only rank. */
    @Test
    void aWorldOfOneRenders() throws IOException {
        SweepResult s = new Runs(1)
                .add("all_reduce", "nccl", new long[] {4 * KIB, 16 * MIB}, at(5, 300))
                .add("all_reduce", "iris_auto", new long[] {4 * KIB, 16 * MIB}, at(6, 300))
                .add("all_reduce", "iris_auto_call", new long[] {4 * KIB}, at(9, 300))
                .add("all_reduce", "nccl_call", new long[] {4 * KIB}, at(8, 300))
                .add("all_gather", "nccl_p2p", new long[] {16 * MIB}, at(5, 900))
                .add("all_gather", "iris", new long[] {16 * MIB}, at(5, 1000))
                .build("--one-call-max-bytes 262144");
        Path out = dir.resolve("w1");
        assertEquals(List.of(), new CclDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).write(out));
        String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
        assertContains(md, "(the targets are stated for two H200s; this run has 1 ranks)", "| 4 KiB | 8.18 | 7.27 | 0.89× |");
    }

    @Test
    void worldsOfThreeToEightRenderAndRoundedSizesCount() throws IOException {
        for (int world = 3; world <= 8; world++) {
            long rounded = MIB / (2L * world) * 2 * world;          // 1 MiB rounded down to whole elements per rank
            Runs runs = new Runs(world)
                    .add("reduce_scatter", "nccl", new long[] {rounded}, at(10, 100))
                    .add("reduce_scatter", "iris", new long[] {rounded}, at(5, 120))
                    .add("all_reduce", "nccl", new long[] {4 * KIB}, at(20, 100))
                    .add("all_reduce", "iris_auto", new long[] {4 * KIB}, at(8, 100))
                    .add("all_reduce", "iris_two_shot", new long[] {4 * KIB}, at(9, 100))
                    .add("all_reduce", "nccl_call", new long[] {4 * KIB}, at(20, 100))
                    .add("all_reduce", "iris_auto_call", new long[] {4 * KIB}, at(8, 100));
            SweepResult s = runs.build("");
            CclTargets t = CclTargets.evaluate(new CclFigures(s.measurements(), world), CclSettings.fromCommand(s.command()), BenchmarkTargets.builtIn().collectives());
            assertEquals(Status.PASS, t.results().get(4).status(), "world " + world + ": " + t.results().get(4));
            assertEquals(Status.PASS, t.results().get(0).status());
            Path out = dir.resolve("w" + world);
            List<String> errors = new CclDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).write(out);
            assertEquals(List.of(), errors);
            String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
            assertTrue(md.contains("(the targets are stated for two H200s; this run has " + world + " ranks)"), md);
            assertTrue(md.contains("n = " + world), md);
            if (rounded != MIB) {
                assertTrue(md.contains("| 1 MiB − " + (MIB - rounded) + " B |"), md);
            }
        }
    }

    @Test
    void roundedSizesAreLabelledByTheirNominalSize() {
        assertEquals("1 MiB", CclFigures.sizeLabel(MIB));
        assertEquals("1 MiB − 4 B", CclFigures.sizeLabel(MIB - 4));
        assertEquals("4 KiB − 4 B", CclFigures.sizeLabel(4092));
        assertEquals("3 KiB", CclFigures.sizeLabel(3 * KIB));
        assertEquals("1 GiB", CclFigures.sizeLabel(1L << 30));
    }

    @Test
    void settingsComeFromTheRecordedCommand() {
        CclSettings s = CclSettings.fromCommand("bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.ccl.CclSweep "
                + "--dtype F16 --reduce-op max --staging-bytes 64m --copy-engine-bytes 1g --eager-calls 8 --graph-calls 4 "
                + "--one-call-max-bytes 64k --out '/tmp/a b.json' --no-nccl");
        assertEquals(new CclSettings("f16", "max", 64L << 20, 1L << 30, 8, 4, 64L << 10, false), s);
        assertEquals(0, CclSettings.fromCommand("x CclSweep --graph-calls 10").oneCallMaxBytes(), "sweeps from before --one-call-max-bytes");
        assertEquals(Long.MAX_VALUE, CclSettings.fromCommand("x CclSweep --graph-calls 10").copyEngineBytes(),
                "sweeps from before --copy-engine-bytes had no copy-engine path");
        assertEquals(Long.MAX_VALUE, CclSettings.fromCommand("x CclSweep --copy-engine-bytes never").copyEngineBytes());
        assertEquals(1, CclSettings.fromCommand("x CclSweep --graph-calls 10").eagerCalls(), "sweeps from before --eager-calls");
        assertEquals(CclSettings.defaults(), CclSettings.fromCommand(null));
        assertEquals(CclSettings.defaults(), CclSettings.fromCommand("x --graph-calls"));
        assertEquals(List.of("a", "b c", "d'e", ""), CclSettings.words("a 'b c' \"d'e\" ''"));
    }

    private static void assertPng(Path file) throws IOException {
        assertTrue(Files.size(file) > 1000, file + " is too small to be a chart");
        byte[] head = new byte[PNG_SIGNATURE.length];
        try (InputStream in = Files.newInputStream(file)) {
            assertEquals(head.length, in.read(head));
        }
        assertArrayEquals(PNG_SIGNATURE, head, file + " is not a PNG: " + Arrays.toString(head));
    }
}

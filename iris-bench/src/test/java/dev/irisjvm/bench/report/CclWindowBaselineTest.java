package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.TargetResult.Status;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
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
 * The collectives report with both NCCL baselines, from ccl-sweep-window-synthetic.json in the
 * test resources (two ranks; its figures are made up for this test, never published): the faster
 * baseline judges each size, the tables name it, and a sweep without the window baseline says why.
 *
 * <p>In the fixture (rank 1's times; rank 0 is 10% faster): all-reduce eager NCCL max(20 µs, 300
 * GB/s), window max(8 µs, 280 GB/s), iris_auto max(9 µs, 340 GB/s); graph NCCL 10 µs, window 5 µs,
 * iris_auto 6 µs; all-gather NCCL 200 GB/s, window 250 GB/s (its check fails on rank 1 at 16 MiB),
 * iris 230 GB/s.
 */
class CclWindowBaselineTest {
    static final long KIB = 1L << 10;
    static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    private static SweepResult fixture(Path dir) throws IOException {
        Path json = dir.resolve("ccl-window.json");
        try (InputStream in = CclWindowBaselineTest.class.getResourceAsStream("ccl-sweep-window-synthetic.json")) {
            Files.copy(in, json, StandardCopyOption.REPLACE_EXISTING);
        }
        return StoredResult.read(json, SweepResult.class);
    }

    private static CclTargets targets(SweepResult s) {
        return CclTargets.evaluate(new CclFigures(s.measurements(), s.worldSize()), CclSettings.fromCommand(s.command()),
                BenchmarkTargets.builtIn().collectives());
    }

    private static CclTargets.Row row(CclTargets t, String id, long bytes) {
        return t.rows().stream().filter(r -> r.spec().id().equals(id) && r.bytes() == bytes).findFirst().orElseThrow();
    }

    @Test
    void theFasterBaselineIsTakenAtEachSize() throws IOException {
        CclFigures f = new CclFigures(fixture(dir).measurements(), 2);
        assertEquals("nccl_window", f.baseline("all_reduce", false, 4 * KIB).orElseThrow().impl());
        assertEquals(8.0, f.baseline("all_reduce", false, 4 * KIB).orElseThrow().figure().us(), 1e-9);
        assertEquals("nccl", f.baseline("all_reduce", false, 64 * MIB).orElseThrow().impl());          // 300 GB/s beats 280
        assertEquals("nccl_window_graph", f.baseline("all_reduce", true, 4 * KIB).orElseThrow().impl());
        assertEquals("nccl", f.baseline("all_gather", false, 16 * MIB).orElseThrow().impl());           // the window's check failed
        assertEquals("nccl_window", f.baseline("all_gather", false, 64 * MIB).orElseThrow().impl());
        assertTrue(f.hasWindowBaseline("all_reduce"));
        assertTrue(CclFigures.isNccl("nccl_window_graph"));
        assertEquals(List.of("iris_one_shot", "iris_two_shot", "iris_auto"), f.irisImpls("all_reduce", false));
    }

    @Test
    void targetsAreJudgedAgainstTheFasterBaseline() throws IOException {
        CclTargets t = targets(fixture(dir));
        // A: plain NCCL's 20 µs would give 2.22x; the window's 8 µs gives 0.889x, and the target fails.
        assertEquals(Status.FAIL, t.results().get(0).status());
        assertEquals(8.0 / 9, t.results().get(0).ratio(), 1e-9);
        assertContains(t.results().get(0).source(), "iris_auto_call vs the faster of nccl_call and nccl_window_call");
        assertTrue(t.results().get(0).measured().contains("NCCL 8.00 µs nccl_window"), t.results().get(0).measured());
        assertEquals("nccl_window_call", row(t, "A", 4 * KIB).baseline());
        assertEquals(5.0 / 6, t.results().get(1).ratio(), 1e-9);                      // B: graph replays, window 5 µs
        // C: at 16 and 64 MiB plain NCCL is the faster: 340 / 300.
        assertEquals(Status.PASS, t.results().get(2).status());
        assertEquals(340.0 / 300, t.results().get(2).ratio(), 1e-9);
        assertEquals("nccl", row(t, "C", 64 * MIB).baseline());
        // D: at 16 MiB the window's output failed its check, so plain NCCL judges (230 / 200); at 64 MiB the window (230 / 250).
        CclTargets.Row d16 = row(t, "D", 16 * MIB);
        assertEquals("nccl", d16.baseline());
        assertEquals(Status.PASS, d16.status());
        assertEquals("nccl_window failed its check; judged against nccl", d16.note());
        assertEquals(230.0 / 250, row(t, "D", 64 * MIB).ratio(), 1e-9);
        assertEquals(Status.FAIL, t.results().get(3).status());
        assertEquals(Status.NOT_MEASURED, t.results().get(4).status());               // no reduce-scatter in the fixture
    }

    @Test
    void theReportNamesBothBaselinesAndWhichOneJudged() throws IOException {
        SweepResult s = fixture(dir);
        Path out = dir.resolve("report");
        List<String> errors = new CclDocument(s, new Document.Context(List.of(), "bin/iris-bench ccl -n 2", null,
                BenchmarkTargets.builtIn(), List.of(), List.of(), null)).write(out);
        assertEquals(List.of(), errors);
        String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
        assertTrue(md.contains("on plain device buffers (`nccl`), on window-registered symmetric buffers (`nccl_window`"), md);
        assertTrue(md.contains("take the fastest of them at each size"), md);
        assertFalse(md.contains("predates the window-registered baseline"), md);
        assertTrue(md.contains("- **Window-registered NCCL** (`nccl_window`)"), md);
        // latency tables: both NCCL columns, the baseline column, ratios against the faster one
        assertContains(md,
                "| size | iris_one_shot µs | iris_two_shot µs | iris_auto µs | nccl µs | nccl_window µs | baseline |",
                "| 4 KiB | 8.00 | 12.0 | 9.00 | 20.0 | 8.00 | nccl_window | 1.00× | 0.67× | 0.89× |",
                "| 64 MiB | — | 192 | 197 | 224 | 240 | nccl | — | 1.17× | 1.13× |",
                "the time of the fastest NCCL (column \"baseline\") ÷ iris's");
        // the targets' per-size table names the baseline of every row
        assertContains(md,
                "| target | size | iris | iris µs | iris bus GB/s | baseline | NCCL µs | NCCL bus GB/s |",
                "| D | 16 MiB | iris |",
                "nccl_window failed its check; judged against nccl");
        assertTrue(md.contains("rank 1's output vs NCCL's: 2 of 8388608 elements differ"), md);   // Data checks
    }

    @Test
    void aSweepWithoutTheWindowBaselineSaysWhy() {
        CclReportTest.Runs runs = new CclReportTest.Runs(2)
                .add("all_reduce", "nccl", new long[] {4 * KIB}, CclReportTest.at(20, 300))
                .add("all_reduce", "iris_auto", new long[] {4 * KIB}, CclReportTest.at(9, 340));
        CclFigures old = new CclFigures(runs.build("").measurements(), 2);
        String before = CclDocument.baselines(old, CclSettings.defaults());
        assertContains(before, "This run predates the window-registered baseline.",
                "It has no single-call timing (sweeps before 2026-12-06 did not time it), so targets A and B are not measured.",
                "The ratios are against what it measured, pending the next two-GPU run.");
        // A judges one call from Java; a run timed back to back only has no figure for it
        TargetResult a = CclTargets.evaluate(old, CclSettings.defaults(), BenchmarkTargets.builtIn().collectives()).results().get(0);
        assertEquals(Status.NOT_MEASURED, a.status());
        assertContains(a.source(), "the run timed no iris_auto_call (one call from Java, launch to completion");

        runs.add(new Measurement("all_reduce", "nccl_window", 0, 0, -1, 0, 0, 0, 0, 0, 0,
                CclFigures.WINDOW_UNAVAILABLE + "rank 1: ncclCommWindowRegister(1048576 bytes, NCCL_WIN_COLL_SYMMETRIC) failed"));
        CclFigures refused = new CclFigures(runs.build("").measurements(), 2);
        assertFalse(refused.hasWindowBaseline("all_reduce"));
        String text = CclDocument.baselines(refused, CclSettings.defaults());
        assertTrue(text.contains("In this run window-registered NCCL not available: rank 1: ncclCommWindowRegister"), text);
        assertTrue(text.contains("The ratios are against what it measured"), text);
        assertEquals("nccl", refused.baseline("all_reduce", false, 4 * KIB).orElseThrow().impl());
    }

    @Test
    void targetsAAndBJudgeOneCallFromJava() throws IOException {
        // back to back iris is 4x NCCL; as one call from Java it is slower than NCCL on its window
        CclReportTest.Runs runs = new CclReportTest.Runs(2)
                .add("all_reduce", "nccl", new long[] {4 * KIB}, CclReportTest.at(20, 300))
                .add("all_reduce", "iris_auto", new long[] {4 * KIB}, CclReportTest.at(5, 340))
                .add("all_reduce", "nccl_call", new long[] {4 * KIB}, CclReportTest.at(20, 300))
                .add("all_reduce", "nccl_window_call", new long[] {4 * KIB}, CclReportTest.at(12, 300))
                .add("all_reduce", "iris_auto_call", new long[] {4 * KIB}, CclReportTest.at(15, 340))
                .add("all_reduce", "nccl_graph_call", new long[] {4 * KIB}, CclReportTest.at(10, 300))
                .add("all_reduce", "iris_auto_graph_call", new long[] {4 * KIB}, CclReportTest.at(8, 340));
        SweepResult s = runs.build("--one-call-max-bytes 262144");
        CclFigures f = new CclFigures(s.measurements(), 2);
        assertEquals(List.of("iris_auto", "nccl"), f.impls("all_reduce"));
        assertEquals(List.of("iris_auto_call", "nccl_call", "nccl_window_call", "iris_auto_graph_call", "nccl_graph_call"),
                f.oneCallImpls("all_reduce"));
        assertEquals("iris_auto", CclFigures.eagerOf("iris_auto_graph_call"));
        assertTrue(CclFigures.isGraph("nccl_graph_call"));
        assertTrue(CclFigures.isNccl("nccl_window_call"));

        CclTargets t = targets(s);
        assertEquals(12.0 / 15, t.results().get(0).ratio(), 1e-9);
        assertEquals(Status.FAIL, t.results().get(0).status());
        assertEquals("nccl_window_call", row(t, "A", 4 * KIB).baseline());
        assertContains(t.results().get(0).source(), "iris_auto_call vs the faster of nccl_call and nccl_window_call");
        assertEquals(10.0 / 8, t.results().get(1).ratio(), 1e-9);
        assertEquals(Status.PASS, t.results().get(1).status());

        Path out = dir.resolve("one-call");
        assertEquals(List.of(), new CclDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).write(out));
        String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
        assertContains(md, "up to 256 KiB, also one call from Java to its completion, eager and as a one-call graph (`_call`), "
                        + "which targets A and B judge.",
                "### all_reduce, one call from Java to its completion, launched eagerly",
                "| size | iris_auto_call µs | nccl_call µs | nccl_window_call µs | baseline | iris_auto_call vs NCCL |",
                "| 4 KiB | 15.0 | 20.0 | 12.0 | nccl_window_call | 0.80× |",
                "### all_reduce, one call from Java to its completion, replaying a one-call CUDA graph",
                "- **One call** (`_call`, sizes up to 256 KiB)");
        assertFalse(md.contains("It has no single-call timing"), md);
    }

    @Test
    void sendsAndReceivesJudgeAllGatherWhereTheyAreNcclsFastestWay() throws IOException {
        CclReportTest.Runs runs = new CclReportTest.Runs(2)
                .add("all_gather", "nccl", new long[] {16 * MIB}, CclReportTest.at(15, 200))
                .add("all_gather", "nccl_p2p", new long[] {16 * MIB}, CclReportTest.at(15, 260))
                .add("all_gather", "iris", new long[] {16 * MIB}, CclReportTest.at(7, 230));
        SweepResult s = runs.build("");
        CclFigures f = new CclFigures(s.measurements(), 2);
        assertEquals("nccl_p2p", f.baseline("all_gather", false, 16 * MIB).orElseThrow().impl());
        CclTargets t = targets(s);
        CclTargets.Row d = row(t, "D", 16 * MIB);
        assertEquals("nccl_p2p", d.baseline());
        assertEquals(230.0 / 260, d.ratio(), 1e-9);
        assertContains(t.results().get(3).source(), "iris vs the faster of nccl and nccl_p2p");

        Path out = dir.resolve("p2p");
        assertEquals(List.of(), new CclDocument(s, Document.Context.of(BenchmarkTargets.builtIn())).write(out));
        String md = Files.readString(out.resolve(CclDocument.MARKDOWN));
        assertContains(md, "| size | iris µs | nccl µs | nccl_p2p µs | baseline | iris vs NCCL |",
                "- **NCCL send/receive** (`nccl_p2p`)");
        assertFalse(md.contains("It has no `nccl_p2p`"), md);
    }
}

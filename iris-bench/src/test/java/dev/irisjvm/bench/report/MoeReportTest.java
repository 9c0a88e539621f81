package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.cli.IrisBench;
import dev.irisjvm.bench.results.MoeMeasurement;
import dev.irisjvm.bench.results.MoeSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MoE report from synthetic sweeps in this package's test resources, with known answers: the
 * same measurements on GPUs of their own (moe-sweep-own-gpus.json) and with two ranks per GPU
 * (moe-sweep-shared-gpus.json).
 *
 * <p>deepseek_v3 T=128: dispatch NCCL 90 µs, iris 60, iris_ll 30 → 3.0× by iris_ll, pass (≥ 1.5);
 * combine NCCL 60, iris 70, iris_ll 50 → 1.2×, FAIL. T=4096: no target. T=16384: dispatch 5000 /
 * 4000 = 1.25×, pass (≥ 1.15); combine 5000 / 4500 = 1.11×, FAIL. mixtral T=512: dispatch's
 * output check failed; combine's NCCL point did not run → not measured (no dispatch + combine points).
 * The expert layer: deepseek_v3 T=128 in sequence 500 µs, fused 480, fed 490 → 1.04×, FAIL (≥ 1.2);
 * mixtral T=1024 1000, 900, 800 → 1.25× fed, pass.
 */
class MoeReportTest {
    @TempDir
    Path dir;

    private Path resource(String name) throws IOException {
        Path file = dir.resolve(name);
        try (InputStream in = MoeReportTest.class.getResourceAsStream(name)) {
            Files.copy(in, file);
        }
        return file;
    }

    private MoeDocument document(String name) throws IOException {
        return new MoeDocument(StoredResult.read(resource(name), MoeSweepResult.class), Document.Context.of(BenchmarkTargets.builtIn()));
    }

    private static MoeDocument.Row row(List<MoeDocument.Row> rows, String model, int tokens, String op) {
        return rows.stream().filter(r -> r.model().equals(model) && r.tokens() == tokens && r.op().equals(op)).findFirst().orElseThrow();
    }

    @Test
    void targetsAreTheIssues() {
        BenchmarkTargets.Moe t = BenchmarkTargets.builtIn().moe();
        assertEquals(1.5, t.minRatio(128));
        assertEquals(1.5, t.minRatio(512));
        assertTrue(Double.isNaN(t.minRatio(1024)));
        assertEquals(1.15, t.minRatio(16384));
        assertEquals(1.2, t.minLayerSpeedup());
    }

    @Test
    void theExpertLayerAgainstItsSequence() throws IOException {
        MoeDocument d = document("moe-sweep-own-gpus.json");
        List<MoeDocument.LayerRow> layer = d.layerRows();
        assertEquals(2, layer.size());
        MoeDocument.LayerRow deepseek = layer.get(0);
        assertEquals(500.0 / 480, deepseek.best(), 1e-12);
        assertEquals("**FAIL**", d.status(deepseek));
        MoeDocument.LayerRow mixtral = layer.get(1);
        assertEquals(1.25, mixtral.speedup(mixtral.fed()), 1e-12);
        assertEquals(1000.0 / 900, mixtral.speedup(mixtral.fused()), 1e-12);
        assertEquals("pass", d.status(mixtral));
        assertTrue(d.rows().stream().noneMatch(r -> r.op().equals(MoeMeasurement.LAYER)), "no layer point among the exchange's rows");
    }

    @Test
    void speedupsModesAndVerdicts() throws IOException {
        MoeDocument d = document("moe-sweep-own-gpus.json");
        List<MoeDocument.Row> rows = d.rows();
        assertEquals(11, rows.size());

        MoeDocument.Row small = row(rows, "deepseek_v3", 128, MoeMeasurement.DISPATCH);
        assertEquals(MoeMeasurement.IRIS_LL, small.best().impl());
        assertEquals(3.0, small.speedup(small.best()), 1e-12);
        assertEquals(1.5, small.speedup(small.iris()), 1e-12);
        assertEquals("pass", d.status(small));
        MoeDocument.Row smallCombine = row(rows, "deepseek_v3", 128, MoeMeasurement.COMBINE);
        assertEquals(1.2, smallCombine.speedup(smallCombine.best()), 1e-12);
        assertEquals("**FAIL**", d.status(smallCombine));

        assertEquals("pass", d.status(row(rows, "deepseek_v3", 16384, MoeMeasurement.DISPATCH)));
        assertEquals("**FAIL**", d.status(row(rows, "deepseek_v3", 16384, MoeMeasurement.COMBINE)));

        MoeDocument.Row broken = row(rows, "mixtral", 512, MoeMeasurement.DISPATCH);
        assertEquals(MoeMeasurement.IRIS_LL, broken.best().impl(), "a point whose check failed is never the library's figure");
        assertEquals("**FAIL** (output check)", d.status(broken));
        MoeDocument.Row noNccl = row(rows, "mixtral", 512, MoeMeasurement.COMBINE);
        assertTrue(Double.isNaN(noNccl.speedup(noNccl.best())));
        assertEquals("not measured", d.status(noNccl));

        // dispatch and combine at T <= 512 and T = 16384 only: not 4096, not dispatch + combine.
        assertEquals(6, d.judgedRows().size());
        assertTrue(d.judgedRows().stream().noneMatch(r -> r.tokens() == 4096 || r.op().equals(MoeMeasurement.DISPATCH_COMBINE)));
        assertNull(row(rows, "deepseek_v3", 4096, MoeMeasurement.DISPATCH).lowLatency());
    }

    @Test
    void markdownFromTheCommandLine() throws IOException {
        Path sweep = resource("moe-sweep-own-gpus.json");
        Path out = dir.resolve("out");
        int rc = IrisBench.commandLine().execute("report", "moe", "--sweep", sweep.toString(), "--out", out.toString(),
                "--run-command", "bin/iris-bench moe -n 2");
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        String md = Files.readString(out.resolve(MoeDocument.MARKDOWN));
        assertTrue(Files.isRegularFile(out.resolve(ReportKind.MOE.sweepFile())), "the raw JSON is copied beside the report");
        assertContains(md,
                "[moe-sweep.json](moe-sweep.json)",
                "bin/iris-bench moe -n 2\n# which ran:\n" + "bin/iris-run -n 2 -- java",
                "2 of 5 point(s) reach their target (1 not measured).",
                "| deepseek_v3 | dispatch | 128 | 30.0 | iris_ll | 90.0 | 3.00× | ≥ 1.5 × | pass |",
                "| deepseek_v3 | combine | 16384 | 4500 | iris | 5000 | 1.11× | ≥ 1.15 × | **FAIL** |",
                "without the weighted sum (which favours NCCL)",
                "- mixtral T=512 dispatch iris: dispatch: local expert 1's rows vs NCCL's",
                "### mixtral",
                "iris_ll ×",
                "## Expert layer",
                "| mixtral | 1024 | 1000 [970–1100] | 900 [873–990] | 800 [776–880] | 1.11× | 1.25× | pass |",
                "| 490 [475–539] | 1.04× | 1.02× | **FAIL** |");
    }

    @Test
    void sharedGpusShowNoRatioAndNoVerdict() throws IOException {
        Path sweep = resource("moe-sweep-shared-gpus.json");
        Path out = dir.resolve("shared");
        IrisBench.commandLine().execute("report", "moe", "--sweep", sweep.toString(), "--out", out.toString());
        String md = Files.readString(out.resolve(MoeDocument.MARKDOWN));
        assertContains(md,
                "sharing GPUs (up to 2 per GPU): nothing is compared",
                "Not judged: the 2 ranks shared GPUs (up to 2 per GPU)",
                "| deepseek_v3 | dispatch | 128 | ≥ 1.5 × | " + SharedGpus.NOT_JUDGED + " |");
        assertFalse(md.contains("| pass |"), md);
        assertFalse(md.matches("(?s).*\\d\\.\\d\\d×.*"), "no ratio anywhere:\n" + md);
        assertFalse(md.contains("iris ×"), md);
        assertTrue(md.contains("| **FAIL** (output check) |"), "a wrong output is wrong on shared GPUs too:\n" + md);
        assertTrue(md.contains("these times include the ranks' turns on each GPU"), md);
        assertContains(md, "| 800 [776–880] | " + SharedGpus.NOT_JUDGED + " |");
    }

    @Test
    void withoutARunTheComparisonIsPending() throws IOException {
        Path out = dir.resolve("pending");
        String md = ReportRuns.pending(out, ReportKind.MOE, MoeDocument.COMMAND, null);
        assertTrue(md.contains("The comparison is pending a run on two GPUs: nothing has been measured yet."), md);
        assertTrue(md.contains("NCCL's combine omits the sum: the comparison favours NCCL"), md);
        assertFalse(md.contains("µs") || md.contains("## Target") || md.contains("pass") || md.contains("FAIL"), md);
    }

    @Test
    void jsonRoundTrip() throws IOException {
        MoeSweepResult read = StoredResult.read(resource("moe-sweep-shared-gpus.json"), MoeSweepResult.class);
        assertTrue(read.sharedGpu());
        String json = ReportRuns.roundTrip(dir, read, read::write, f -> StoredResult.read(f, MoeSweepResult.class));
        assertFalse(json.contains("\"sharedGpu\""), "derived facts are not stored");
    }
}

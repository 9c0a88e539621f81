package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.cli.IrisBench;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.AttentionBenchResult.LocalPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.Portable;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local kernel's extra implementation iris-portable (AttentionBench --portable) in the attention
 * report: its columns and ratio where the run measured it, a failed output check among the
 * verdicts, and runs without it (every run before it) read and rendered as before. The numbers are
 * made up for the test.
 */
class AttentionPortableReportTest {
    @TempDir
    Path dir;

    /**
     * AttentionReportTest's run with iris-portable on two of its three local points: 4K at 340 of
     * Iris's 680 TFLOP/s, its output within the bound; 4K causal at 300 of 400, its output not; 16K
     * not measured.
     */
    static AttentionBenchResult run() {
        AttentionBenchResult r = AttentionReportTest.run();
        List<LocalPoint> l = r.local();
        List<LocalPoint> local = List.of(
                withPortable(l.get(0), new Portable(10, 200, 198, 203, 340, "ok: max |portable - iris| 0.00391, max |o| 1.00")),
                withPortable(l.get(1), new Portable(10, 133.3, 130, 140, 300, "FAIL: max |portable - iris| 0.500, max |o| 1.00")),
                l.get(2));
        return new AttentionBenchResult(r.date(), r.hardware(), r.software(), r.command(), r.world(), r.warmup(), r.sdpa(), local, r.ring(),
                r.decode(), r.hbmCopy());
    }

    private static LocalPoint withPortable(LocalPoint p, Portable portable) {
        return new LocalPoint(p.dtype(), p.batch(), p.qHeads(), p.kvHeads(), p.seq(), p.headDim(), p.causal(), p.reps(), p.medianUs(),
                p.minUs(), p.maxUs(), p.tflops(), portable);
    }

    @Test
    void showsThePortableColumnsAndRatio() throws IOException {
        String md = render(run(), "portable");
        assertEquals(run(), StoredResult.read(dir.resolve("portable.json"), AttentionBenchResult.class), "the JSON round trip keeps iris-portable");
        assertContains(md,
                "Iris portable: the portable mainloop forced (`Attention.create(GemmMainloop.PORTABLE)`",
                "| Iris ÷ default | Iris portable µs (min–max) | Iris portable TFLOP/s | portable ÷ Iris | portable check |",
                "| 0.971× | 200 (198–203) | 340 | 0.500× | ok: max \\|portable - iris\\| 0.00391, max \\|o\\| 1.00 |",
                "| 0.667× | 133 (130–140) | 300 | 0.750× | FAIL: max \\|portable - iris\\| 0.500, max \\|o\\| 1.00 |",
                "| — | — | — | — | — |");
    }

    @Test
    void aFailedPortableCheckIsAFailedVerdict() {
        List<AttentionDocument.Verdict> vs = new AttentionDocument(run(), Document.Context.of(BenchmarkTargets.builtIn())).verdicts();
        List<AttentionDocument.Verdict> portable = vs.stream().filter(v -> v.target().startsWith("portable output")).toList();
        assertEquals(1, portable.size(), vs.toString());
        assertEquals("S 4K causal", portable.get(0).config());
        assertEquals(AttentionDocument.FAIL, portable.get(0).status());
    }

    /** A local point as runs before --portable wrote it: no "portable" field, read as not measured, no portable column. */
    @Test
    void rendersARunWithoutItAsBefore() throws IOException {
        Path json = dir.resolve("old.json");
        Files.writeString(json, """
                {"date": "2026-12-01T10:00:00Z", "hardware": "1 x NVIDIA H200", "software": "CUDA 13.0", "command": "x", "world": 1,
                 "warmup": 2, "sdpa": null, "ring": [], "decode": [],
                 "local": [{"dtype": "bf16", "batch": 1, "qHeads": 32, "kvHeads": 8, "seq": 4096, "headDim": 128, "causal": false,
                            "reps": 10, "medianUs": 100.0, "minUs": 99.0, "maxUs": 101.0, "tflops": 680.0}]}
                """);
        assertNull(StoredResult.read(json, AttentionBenchResult.class).local().get(0).portable());
        String md = reportOf(json, "old");
        assertContains(md, "| S | mask | Iris µs (min–max) | Iris TFLOP/s | SDPA default TFLOP/s | SDPA flash TFLOP/s | SDPA cuDNN TFLOP/s "
                + "| Iris ÷ default |\n", "| 4K | none | 100 (99.0–101) | 680 | — | — | — | — |\n");
        assertFalse(md.contains("portable"), md);
    }

    private String render(AttentionBenchResult run, String name) throws IOException {
        Path json = dir.resolve(name + ".json");
        run.write(json);
        return reportOf(json, name);
    }

    private String reportOf(Path json, String name) throws IOException {
        int rc = IrisBench.commandLine().execute("report", "attention", "--sweep", json.toString(), "--out", dir.resolve(name).toString());
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        return Files.readString(dir.resolve(name).resolve(AttentionDocument.MARKDOWN));
    }
}

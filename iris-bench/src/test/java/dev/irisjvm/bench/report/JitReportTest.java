package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.cli.IrisBench;
import dev.irisjvm.bench.jit.ExampleSource;
import dev.irisjvm.bench.jit.OverlapStyles;
import dev.irisjvm.bench.results.JitBenchResult;
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
 * jit.md from a synthetic run (jit-bench-synthetic.json in the test resources; its numbers are
 * made up for the test, never published) and without a run. The committed jit.md, device-line
 * table included, is CommittedReportsTest's.
 */
class JitReportTest {
    @TempDir
    Path dir;

    private Path synthetic() throws IOException {
        Path json = dir.resolve("in.json");
        try (InputStream in = JitReportTest.class.getResourceAsStream("jit-bench-synthetic.json")) {
            Files.copy(in, json, StandardCopyOption.REPLACE_EXISTING);
        }
        return json;
    }

    @Test
    void theRunsTableHasMedianMinAndMaxPerSourceAndVariant() throws IOException {
        Path out = dir.resolve("out");
        int rc = IrisBench.commandLine().execute("report", "jit", "--sweep", synthetic().toString(), "--out", out.toString(),
                "--run-command", "bin/iris-bench jit --quick");
        assertEquals(0, rc, "no charts to draw, so nothing to fail");
        String md = Files.readString(out.resolve(JitDocument.MARKDOWN));
        assertContains(md,
                "| `01_load.cu` | Example01Load | plain | 7 of 10 | 1 | 6 KiB | 4.50 (4.00–5.00) | 120 (100–140) "
                        + "| 1.50 (1.25–2.00) | 0.300 (0.250–0.500) |",
                "| `01_load.cu` | Example01Load | checked | 7 of 10 | 1 | 9 KiB | 4.50 (4.00–5.00) | 130 (125–150) ",
                "| `10_overlap_styles.cu` | Example10OverlapStyles | plain | 99 of 156 | 5 | 1.5 MiB | 4.50 (4.00–5.00) "
                        + "| 9000 (8500–9500) | 3.00 (2.50–3.50) | 12.0 (11.0–15.0) |",
                "- plain: `-arch=sm_90a -std=c++17 -default-device -I<cache>/include/0123456789abcdef "
                        + "-I/usr/local/cuda/include`\n- checked: `-arch=sm_90a -std=c++17 -default-device -I<cache>/include/0123456789abcdef "
                        + "-I/usr/local/cuda/include -DIRIS_CHECKED=1`\n",
                "- **NVRTC**: 13.1 (`/usr/local/cuda/lib64/libnvrtc.so.13`)",
                "- **the process's first compile**: 812 ms (`01_load.cu`");
        assertTrue(md.contains("bin/iris-bench jit --quick\n# which ran:\njava -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.jit.JitBench"),
                md);
        assertContains(md,
                "[jit-bench.json](jit-bench.json)",
                JitDocument.stylesSection(OverlapStyles.of(ExampleSource.allOnClassPath())),
                "Pending: this table needs two GPUs");
        assertFalse(md.contains(JitDocument.PENDING), "the run measured the first two parts");
        assertEquals(StoredResult.read(synthetic(), JitBenchResult.class), StoredResult.read(out.resolve(ReportKind.JIT.sweepFile()), JitBenchResult.class),
                "the JSON is copied beside the report as it was");
    }

    @Test
    void theJsonRoundTripKeepsEveryField() throws IOException {
        JitBenchResult run = StoredResult.read(synthetic(), JitBenchResult.class);
        Path again = dir.resolve("again.json");
        run.write(again);
        assertEquals(run, StoredResult.read(again, JitBenchResult.class));
        assertEquals(List.of(120.0, 100.0, 140.0), run.sources().get(0).compileMs());
        assertEquals("checked", run.sources().get(1).variant());
    }

    @Test
    void withoutARunTheMeasuredPartsArePendingAndNoFigureIsWritten() throws IOException {
        Path out = Files.createDirectories(dir.resolve("empty"));
        assertEquals(0, IrisBench.commandLine().execute("report", "jit", "--out", out.toString()));
        String md = Files.readString(out.resolve(JitDocument.MARKDOWN));
        assertContains(md,
                "- **measurements**: " + JitDocument.PENDING,
                "Measurements " + JitDocument.PENDING + ".",
                "Pending: this table needs two GPUs",
                JitDocument.STYLES_HEADING);
        assertFalse(md.contains(" ms ("), "no timing: " + md);
        assertFalse(Files.exists(out.resolve(ReportKind.JIT.sweepFile())));
    }

    @Test
    void anExplicitJsonThatIsMissingIsStillAnError() {
        assertEquals(2, IrisBench.commandLine().execute("report", "jit", "--sweep", dir.resolve("nope.json").toString(), "--out",
                dir.toString()));
        assertEquals(2, IrisBench.commandLine().execute("report", "gemm", "--out", dir.toString()), "other reports need their run");
    }
}

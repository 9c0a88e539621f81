package dev.irisjvm.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README.md's status section against the committed raw JSON in docs/benchmarks: the section must be
 * exactly what {@link StatusSection} computes from it, so a figure can never drift from its data.
 */
class StatusSectionTest {
    private static final String REGENERATE = "regenerate it from the repository root with: " + StatusReport.COMMAND
            + " (iris-bench/target/lib comes from mvn package)";

    @TempDir
    Path dir;

    /** The repository root: the nearest folder above the module with README.md and docs/benchmarks. */
    private static Path root() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs/benchmarks"))) {
                return p;
            }
        }
        throw new IllegalStateException("no README.md with docs/benchmarks above " + Path.of("").toAbsolutePath());
    }

    private static String readmeSection() throws IOException {
        return StatusSection.extract(Files.readString(root().resolve("README.md"), StandardCharsets.UTF_8));
    }

    private static String generated() throws IOException {
        return StatusSection.render(root().resolve("docs/benchmarks"), "docs/benchmarks");
    }

    @Test
    void readmeStatusSectionEqualsWhatTheCommittedJsonGives() throws IOException {
        String readme = readmeSection();
        String expected = generated();
        if (!readme.equals(expected)) {
            String[] a = expected.split("\n", -1);
            String[] b = readme.split("\n", -1);
            int line = 0;
            while (line < Math.min(a.length, b.length) && a[line].equals(b[line])) {
                line++;
            }
            fail("README.md's status section differs from the committed JSON in docs/benchmarks at its line " + (line + 1)
                    + ":\n  README:    " + (line < b.length ? b[line] : "(end)") + "\n  generated: " + (line < a.length ? a[line] : "(end)")
                    + "\n" + REGENERATE);
        }
    }

    /** Implied by the test above, but it names the figure that drifted: every number before a "×" or "x". */
    @Test
    void everyRatioInTheReadmeSectionIsComputedFromTheJson() throws IOException {
        String generated = generated().replaceAll("\\s+", " ");
        Matcher m = Pattern.compile("\\d+(?:\\.\\d+)?(?:–\\d+(?:\\.\\d+)?)?\\s?[×x](?![A-Za-z0-9])")
                .matcher(readmeSection().replaceAll("\\s+", " "));
        List<String> missing = new ArrayList<>();
        int found = 0;
        while (m.find()) {
            found++;
            if (!generated.contains(m.group())) {
                missing.add(m.group());
            }
        }
        assertTrue(found > 0, "no ratio found in README.md's status section");
        assertTrue(missing.isEmpty(), "figures in README.md's status section that the JSON does not give: " + missing + "; " + REGENERATE);
    }

    /** Issue 29: each run the section cites is named by its commit as well as its date. */
    @Test
    void everyCitedRunHasItsCommit() throws IOException {
        String section = readmeSection().replaceAll("\\s+", " ");
        RunCommits commits = RunCommits.read(root().resolve("docs/benchmarks"));
        Matcher m = Pattern.compile("\\[([a-z0-9-]+\\.json)]\\(").matcher(section);
        List<String> cited = new ArrayList<>();
        while (m.find()) {
            cited.add(m.group(1));
        }
        assertFalse(cited.isEmpty(), "no JSON cited in README.md's status section");
        for (String file : cited) {
            String commit = commits.of(file);
            assertNotNull(commit, file + " is cited in README.md's status section but docs/benchmarks/" + RunCommits.FILE
                    + " names no commit for it");
            String named = RunCommits.isHash(commit) ? "at `" + commit + "`" : "(commit " + commit + ")";
            assertTrue(Pattern.compile(Pattern.quote("[" + file + "](docs/benchmarks/" + file + ") of ") + "\\S+ " + Pattern.quote(named))
                    .matcher(section).find(), file + " is not cited with its date and " + named);
        }
        assertFalse(section.contains("at an unrecorded commit"), section);
    }

    @Test
    void aRunWithoutACommitSaysSo() {
        assertEquals("[a.json](d/a.json) of 2026-12-01T00:00:00Z at an unrecorded commit",
                new RunSource("a.json", "2026-12-01T00:00:00Z", null).cite("d"));
        assertEquals("[a.json](d/a.json) of 2026-12-01T00:00:00Z (commit not recorded; the JSON was committed in 91d154d)",
                new RunSource("a.json", "2026-12-01T00:00:00Z", "not recorded; the JSON was committed in 91d154d").cite("d"));
    }

    @Test
    void spliceReplacesOnlyTheTextBetweenTheMarkers() {
        String readme = "# T\n\n" + StatusSection.BEGIN + "\nold 1.5×\n" + StatusSection.END + "\n\n## Next\n";
        String spliced = StatusSection.splice(readme, "new\n");
        assertEquals("# T\n\n" + StatusSection.BEGIN + "\nnew\n" + StatusSection.END + "\n\n## Next\n", spliced);
        assertEquals("new\n", StatusSection.extract(spliced));
        assertThrows(IllegalArgumentException.class, () -> StatusSection.extract("# no markers\n"));
        assertThrows(IllegalArgumentException.class, () -> StatusSection.extract(StatusSection.END + "\n" + StatusSection.BEGIN + "\n"));
    }

    /** From a synthetic GEMM sweep with known ratios; the runs that are absent point to their reports without figures. */
    @Test
    void gemmItemSpansTheCheckedShapesAndAbsentRunsHaveNoFigure() throws IOException {
        GemmReportTest.sweep().write(dir.resolve(ReportKind.GEMM.sweepFile()));
        String section = StatusSection.render(dir, "docs/benchmarks").replaceAll("\\s+", " ");
        // 1450/1500 and 1450/1700; the shape without cuBLAS and the one whose check failed give no ratio.
        assertTrue(section.contains("a Hopper GEMM at 0.853–0.967× cuBLAS's TFLOP/s on 4 shapes"), section);
        assertTrue(section.contains("device-initiated collectives: no committed run, see [collectives.md](docs/benchmarks/collectives.md)"),
                section);
        assertTrue(section.contains("attention: no committed run"), section);
    }

    /** The suite's item: absent, it points to the command that makes it; present, its mean, passes and worst shape as gemm-suite.md. */
    @Test
    void gemmSuiteItemJudgesTheSuiteAsItsReport() throws IOException {
        String absent = StatusSection.render(dir, "docs/benchmarks").replaceAll("\\s+", " ");
        assertTrue(absent.contains("- the GEMM on issue 26's model shapes: no committed run yet (`bin/iris-bench gemm --suite models` "
                + "writes gemm-suite.md);"), absent);
        GemmSuiteReportTest.synthetic(dir).write(dir.resolve(ReportKind.GEMM_SUITE.sweepFile()));
        Files.writeString(dir.resolve(RunCommits.FILE), "{\"commits\": {\"gemm-suite.json\": \"abc1234\"}}");
        String section = StatusSection.render(dir, "docs/benchmarks").replaceAll("\\s+", " ");
        assertTrue(section.contains("- the GEMM on 6 model shapes (suite `models`): a geometric mean of 0.928× the faster of cuBLAS's and "
                + "cuBLASLt's TFLOP/s per shape (target 0.97), 3 of 6 shapes at 0.9 or more, the lowest 0.800× (1x6144x4096:nk), 1 "
                + "output(s) failing the check ([gemm-suite.md](docs/benchmarks/gemm-suite.md), "
                + "[gemm-suite.json](docs/benchmarks/gemm-suite.json) of 2026-12-03T10:00:00Z at `abc1234`);"), section);
    }

    @Test
    void ratioRangesPrintThreeDecimalsAndOneFigureWhenTheEndsAgree() {
        assertEquals("1.249–1.341×", RatioRange.of(List.of(1.302, 1.2494, 1.341, Double.NaN)).orElseThrow().text());
        assertEquals("1.311×", RatioRange.of(List.of(1.3111, 1.3109)).orElseThrow().text());
        assertTrue(RatioRange.of(List.of(Double.NaN)).isEmpty());
    }

    @Test
    void wrappedLinesNeverStartAMarkdownBlock() {
        String wrapped = MarkdownWrap.wrap("- fused all-gather + GEMM and 1. more - words here", 20);
        for (String line : wrapped.split("\n")) {
            assertTrue(line.length() <= 24, line);
            assertTrue(!line.stripLeading().matches("([-+*>#]|\\d+[.)]) .*") || line.startsWith("- "), wrapped);
        }
        assertEquals(wrapped.replaceAll("\\s+", " "), "- fused all-gather + GEMM and 1. more - words here");
    }
}

package dev.irisjvm.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.irisjvm.bench.cli.IrisBench;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every report committed under docs/benchmarks renders again from its committed raw JSON with
 * {@code iris-bench report KIND}, to the same Markdown (jit.md also without a run, from the example
 * sources; moe.md, training-step.md and nodes.md without a run say what they will measure), and
 * judges by the targets file beside it: a broken renderer or a target that no longer comes from the
 * data file fails the build. A report whose first run is still to be committed (its JSON absent) is
 * skipped, unless it stands without one. jit.md and nodes.md judge nothing: jit records numbers, and
 * nodes compares two implementations without a target.
 */
class CommittedReportsTest {
    static final Path COMMITTED = Path.of("../docs/benchmarks");
    /** The kinds whose report stands while their first run is still to be committed. */
    private static final Set<ReportKind> PENDING_ALLOWED = EnumSet.of(ReportKind.MOE, ReportKind.STEP, ReportKind.NODES);

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(ReportKind.class)
    void rendersTheCommittedReportAgainFromItsJson(ReportKind kind) throws IOException {
        Path out = copyOfCommitted(kind);
        int rc = IrisBench.commandLine().execute("report", kind.prefix(), "--out", out.toString());
        assertTrue(rc == 0 || rc == Report.EXIT_NO_CHARTS, "exit " + rc);
        String rendered = Files.readString(out.resolve(kind.markdown()));
        assertEquals(withoutWriteDate(Files.readString(COMMITTED.resolve(kind.markdown()))), withoutWriteDate(rendered),
                kind + ": the committed report differs");
        if (judged(kind) && runCommitted(kind)) {  // moe, training-step: no run yet
            assertTrue(rendered.contains("## Target"), rendered);
        } else if (!judged(kind)) {
            assertFalse(rendered.contains("## Target"), kind + " has no target:\n" + rendered);
        }
    }

    @ParameterizedTest
    @EnumSource(value = ReportKind.class, mode = EnumSource.Mode.EXCLUDE, names = {"JIT", "NODES"})
    void judgesByTheTargetsFileBesideTheReport(ReportKind kind) throws IOException {
        assumeRunCommitted(kind);
        Path out = copyOfCommitted(kind);
        String targets = Files.readString(out.resolve(BenchmarkTargets.FILE));
        // Every bound out of reach: nothing can pass any more.
        Files.writeString(out.resolve(BenchmarkTargets.FILE), unreachable(targets));
        IrisBench.commandLine().execute("report", kind.prefix(), "--out", out.toString());
        String md = Files.readString(out.resolve(kind.markdown()));
        String targetsSection = md.substring(md.indexOf("## Target"));
        targetsSection = targetsSection.substring(0, nextSection(targetsSection));
        assertTrue(!Pattern.compile("\\|\\s*(pass|PASS)\\s*\\|").matcher(targetsSection).find(), kind + ":\n" + targetsSection);
        assertTrue(targetsSection.contains("FAIL") || targetsSection.contains("not measured") || targetsSection.contains("not judged"),
                kind + ":\n" + targetsSection);
    }

    /**
     * The rounding notes and the bounds table take their numbers from the targets file beside the
     * report, as the verdicts do: with another target they name it, and the near miss under it.
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "GEMM       | \"minRatioToCublas\": 0.95 | \"minRatioToCublas\": 0.85 | Ratio to three decimals: 0.8496 must not read as a passing 0.85.",
            "GEMM_SUITE | \"minRatio\": 0.90,        | \"minRatio\": 0.8,         | Ratio to three decimals: 0.7996 must not read as a passing 0.80.",
            "FUSED      | \"all_scatter 8192x8192x8192\": 1.25 | \"all_scatter 8192x8192x8192\": 1.5 | Speedups to three decimals, so that 1.499 does not read as a passing 1.50.",
            "RMA        | \"copyEngineFraction\": 0.95 | \"copyEngineFraction\": 0.85 | copy engine in the same direction, same run (target ≥ 0.85×)"})
    void theNotesNameTheTargetsOfTheFileBesideTheReport(ReportKind kind, String committed, String other, String note) throws IOException {
        assumeRunCommitted(kind);
        Path out = copyOfCommitted(kind);
        String targets = Files.readString(out.resolve(BenchmarkTargets.FILE));
        assertTrue(targets.contains(committed), "targets.json no longer states " + committed);
        Files.writeString(out.resolve(BenchmarkTargets.FILE), targets.replace(committed, other));
        IrisBench.commandLine().execute("report", kind.prefix(), "--out", out.toString());
        String md = Files.readString(out.resolve(kind.markdown()));
        assertTrue(md.contains(note), kind + ": no '" + note + "' in\n" + md);
    }

    /**
     * Only the MoE, training-step and nodes benchmarks may lack their run (their reports then say
     * the comparison is pending); once moe-sweep.json or training-step.json is committed, its report
     * is judged like the others.
     */
    private static void assumeRunCommitted(ReportKind kind) {
        assumeTrue(runCommitted(kind), "no " + kind.prefix() + " run committed yet");
    }

    private static boolean runCommitted(ReportKind kind) {
        return !PENDING_ALLOWED.contains(kind) || Files.isRegularFile(COMMITTED.resolve(kind.sweepFile()));
    }

    /** Whether the kind's report judges by targets.json: jit records numbers, nodes compares without a target. */
    private static boolean judged(ReportKind kind) {
        return kind != ReportKind.JIT && kind != ReportKind.NODES;
    }

    /** The report without its "report written" line, the one line that differs from one rendering to the next. */
    static String withoutWriteDate(String md) {
        return md.replaceAll("(?m)^- \\*\\*report written\\*\\*: .*\n", "");
    }

    /** Ratio bounds that must be met from below become huge; limits to stay under become tiny. */
    static String unreachable(String json) {
        Matcher m = Pattern.compile("\"(minRatio\\w*|minSpeedup|copyEngineFraction|decodeMinSpeedup|localMinRatioToSdpa|\\w+MaxUs"
                + "|ringMax\\w+)\": [0-9.]+").matcher(json);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            boolean upper = m.group(1).contains("Max");
            m.appendReplacement(sb, "\"" + m.group(1) + "\": " + (upper ? "0.000001" : "1000000"));
        }
        m.appendTail(sb);
        return sb.toString().replaceAll("(\"\\w+ \\d+x\\d+x\\d+\"): [0-9.]+", "$1: 1000000");
    }

    private static int nextSection(String fromTargets) {
        int i = fromTargets.indexOf("\n## ", 3);
        return i < 0 ? fromTargets.length() : i;
    }

    /** The report's folder as committed: its JSON, JMH files, traces, commands, findings and the targets. */
    private Path copyOfCommitted(ReportKind kind) throws IOException {
        assumeTrue(kind.runOptional() || Files.isRegularFile(COMMITTED.resolve(kind.sweepFile())), kind + ": no committed run yet");
        Path out = Files.createDirectories(dir.resolve(kind.prefix()));
        try (DirectoryStream<Path> files = Files.newDirectoryStream(COMMITTED)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                boolean mine = name.startsWith(kind.prefix() + "-") || name.equals(kind.sweepFile()) || name.equals(kind.findingsFile()) || name.equals(BenchmarkTargets.FILE);
                if (mine && Files.isRegularFile(f) && !name.endsWith(".png") && !name.equals(kind.markdown())) {
                    Files.copy(f, out.resolve(name));
                }
            }
        }
        return out;
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.GemmDocument.Row;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The README's status section, written from the committed raw JSON of the benchmark runs in one
 * folder, so that no figure in it can be typed by hand: every ratio is computed here the way its
 * report computes it, each range spans the points and runs it summarises, and each item names the
 * JSON, the date and the commit ({@link RunCommits}) of the runs it rests on. The section sits in README.md between {@value #BEGIN}
 * and {@value #END}; {@link StatusReport} rewrites it, and a unit test fails when it differs.
 *
 * <p>Files read (a missing one leaves its item without figures, pointing to the report):
 * {@code rma-sweep.json}, every {@code ccl-sweep*.json}, {@code gemm-sweep.json},
 * {@code gemm-suite.json}, {@code fused-sweep.json}, {@code attention-bench.json}, {@code attention-bench-d64.json},
 * {@code attention-decode.json}.
 *
 * <pre>{@code
 * String section = StatusSection.render(Path.of("docs/benchmarks"), "docs/benchmarks");
 * String readme = Files.readString(Path.of("README.md"));
 * Files.writeString(Path.of("README.md"), StatusSection.splice(readme, section));
 * }</pre>
 */
public final class StatusSection {
    public static final String BEGIN = "<!-- status:begin -->";
    public static final String END = "<!-- status:end -->";
    /** The collectives' sweeps: the report's run and any rerun committed beside it. */
    static final String CCL_GLOB = "ccl-sweep*.json";
    static final String RMA_FILE = "rma-sweep.json";
    static final String FUSED_FILE = "fused-sweep.json";
    static final String ATTENTION_FILE = "attention-bench.json";
    /**
     * The latest flash-decode run where it is not attention-bench.json's (a decode-only run, as on one
     * GPU while ring attention waits for two): a copy of its dated file, as gemm-suite.json is.
     */
    static final String DECODE_FILE = "attention-decode.json";
    /**
     * The latest local attention run at head size 64, where attention-bench.json's is at 128 (the
     * benchmark takes one head size a run): a copy of its dated file.
     */
    static final String ATTENTION_D64_FILE = "attention-bench-d64.json";
    /** The README's hand-wrapped width. */
    static final int WIDTH = 100;

    private final Path dir;
    private final String linkBase;
    private final BenchmarkTargets targets;
    private final RunCommits commits;
    /** Hardware string as recorded to the items measured on it, for the introduction. */
    private final Map<String, List<String>> hardware = new LinkedHashMap<>();

    private StatusSection(Path dir, String linkBase) throws IOException {
        this.dir = dir;
        this.linkBase = linkBase;
        this.targets = BenchmarkTargets.forFolder(dir);
        this.commits = RunCommits.read(dir);
    }

    /**
     * The section's text (without the markers) from the JSON in {@code benchmarks}; links to the
     * reports and the JSON start with {@code linkBase}, the same folder as seen from the README.
     */
    public static String render(Path benchmarks, String linkBase) throws IOException {
        return new StatusSection(benchmarks, linkBase).render();
    }

    private String render() throws IOException {
        // The items first: reading their runs collects the hardware the introduction names.
        List<String> items = Stream.of(rma(), ccl(), gemm(), gemmSuite(), fused(), attention(),
                        attentionItem(ATTENTION_D64_FILE, "attention at head size 64"), attentionItem(DECODE_FILE, "flash-decode"), faults())
                .filter(item -> !item.isEmpty()).toList();
        StringBuilder sb = new StringBuilder();
        for (String paragraph : concat(intro(), items)) {
            sb.append(MarkdownWrap.wrap(paragraph.strip(), WIDTH)).append('\n');
        }
        return sb.toString();
    }

    private static List<String> concat(String first, List<String> rest) {
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(rest);
        return all;
    }

    /** The text between the markers of {@code readme}. */
    public static String extract(String readme) {
        int[] at = markers(readme);
        return readme.substring(at[0], at[1]);
    }

    /** {@code readme} with the text between its markers replaced by {@code section}. */
    public static String splice(String readme, String section) {
        int[] at = markers(readme);
        return readme.substring(0, at[0]) + section + readme.substring(at[1]);
    }

    /** Where the section's text starts (after BEGIN's line) and ends (at END). */
    private static int[] markers(String readme) {
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        if (begin < 0 || end < 0 || end < begin || readme.indexOf(BEGIN, begin + 1) >= 0) {
            throw new IllegalArgumentException("the README needs one " + BEGIN + " line followed by one " + END + " line");
        }
        int start = readme.indexOf('\n', begin);
        if (start < 0 || start >= end) {
            throw new IllegalArgumentException(BEGIN + " must stand on a line of its own, before " + END);
        }
        return new int[] {start + 1, end};
    }

    private String intro() {
        String machines = hardware.entrySet().stream().map(e -> e.getKey() + " for " + CclStatus.join(e.getValue()))
                .collect(Collectors.joining("; "));
        String docs = Path.of(linkBase).resolveSibling("gpu-test-log.md").toString().replace('\\', '/');
        return "Status. Every figure below is computed by `StatusReport` from the committed raw JSON of the runs each item names "
                + "(file, the run's date, UTC, and the commit it measured), against its baseline measured in the same run; ranges span every point and run "
                + "they summarise. Hardware as the runs recorded it: " + (machines.isEmpty() ? "none" : machines) + ". Reports under ["
                + linkBase + "](" + linkBase + "), GPU test runs in [" + docs + "](" + docs + "):\n";
    }

    private String rma() throws IOException {
        String head = "- the foundation (heap, IPC, rendezvous, launcher, device API, one-sided tile operations, barriers) and the RMA "
                + "benchmarks (" + link(linkBase, RmaDocument.MARKDOWN);
        SweepResult sweep = read(RMA_FILE, SweepResult.class, "the RMA");
        return head + (sweep == null ? "" : ", " + source(RMA_FILE, sweep.date()).cite(linkBase)) + ");\n";
    }

    private String ccl() throws IOException {
        List<CclStatus.Run> runs = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, CCL_GLOB)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                SweepResult sweep = read(name, SweepResult.class, "collectives");
                runs.add(new CclStatus.Run(source(name, sweep.date()), sweep));
            }
        }
        return runs.isEmpty() ? noRun("device-initiated collectives", CclDocument.MARKDOWN) : new CclStatus(runs, targets).item(linkBase);
    }

    /** Iris TFLOP/s ÷ the baseline's per shape, as gemm.md's target table; a shape whose output check failed is no figure. */
    private String gemm() throws IOException {
        GemmSweepResult sweep = read(ReportKind.GEMM.sweepFile(), GemmSweepResult.class, "the GEMM");
        if (sweep == null) {
            return noRun("a Hopper GEMM", GemmDocument.MARKDOWN);
        }
        GemmDocument doc = new GemmDocument(sweep, Document.Context.of(targets));
        List<Row> rows = doc.rows();
        List<Double> ratios = rows.stream().filter(r -> !r.checkFailed()).map(Row::ratio).toList();
        long checked = rows.stream().filter(Row::checked).count();
        String types = sweep.measurements().stream().map(m -> m.inType() + " → " + m.outType()).distinct().collect(Collectors.joining(", "));
        return "- a Hopper GEMM at " + RatioRange.of(ratios).map(RatioRange::text).orElse("no measured ratio to")
                + " " + doc.baselineRate() + " on " + rows.size() + " shapes, " + types + ", " + checked + " of " + rows.size()
                + " outputs matching cuBLAS's (" + link(linkBase, GemmDocument.MARKDOWN) + ", "
                + source(ReportKind.GEMM.sweepFile(), sweep.date()).cite(linkBase) + ");\n";
    }

    /**
     * The GEMM on the model-shape suite, judged as gemm-suite.md judges it: the geometric mean of
     * the ratios, how many shapes reach the per-shape ratio, and the worst shape.
     */
    private String gemmSuite() throws IOException {
        GemmSweepResult sweep = read(ReportKind.GEMM_SUITE.sweepFile(), GemmSweepResult.class, "the GEMM suite");
        if (sweep == null) {
            return "- the GEMM on issue 26's model shapes: no committed run yet (`bin/iris-bench gemm --suite models` writes "
                    + GemmSuiteDocument.MARKDOWN + ");\n";
        }
        GemmSuiteDocument doc = new GemmSuiteDocument(sweep, Document.Context.of(targets));
        GemmSuiteSummary s = doc.summary();
        Row worst = s.worstFirst().stream().filter(r -> !r.checkFailed() && !Double.isNaN(r.ratio())).findFirst().orElse(null);
        String worstText = worst == null ? "" : ", the lowest " + Sizes.ratio3(worst.ratio()) + " (" + worst.iris().shape() + ")";
        return "- the GEMM on " + s.rows().size() + " model shapes (suite `" + sweep.suite() + "`): a geometric mean of "
                + (s.judged().isEmpty() ? "no measured ratio to" : Sizes.ratio3(s.geomean())) + " the faster of cuBLAS's and "
                + "cuBLASLt's TFLOP/s per shape (target " + targets.gemmSuite().minRatioGeomean() + "), " + s.passing() + " of "
                + s.rows().size() + " shapes at " + targets.gemmSuite().minRatio() + " or more" + worstText + ", "
                + s.checkFailures() + " output(s) failing the check (" + link(linkBase, GemmSuiteDocument.MARKDOWN) + ", "
                + source(ReportKind.GEMM_SUITE.sweepFile(), sweep.date()).cite(linkBase) + ");\n";
    }

    private String fused() throws IOException {
        FusedSweepResult sweep = read(FUSED_FILE, FusedSweepResult.class, "fused kernels");
        return sweep == null ? noRun("fused GEMM + communication", FusedDocument.MARKDOWN)
                : new FusedStatus(source(FUSED_FILE, sweep.date()), sweep, targets).item(linkBase);
    }

    private String attention() throws IOException {
        String item = attentionItem(ATTENTION_FILE, "attention");
        return item.isEmpty() ? noRun("attention", AttentionDocument.MARKDOWN) : item;
    }

    /**
     * The item of the attention run in {@code file} (attention-bench.json, or the head-size-64 or
     * decode-only run beside it), which the introduction names {@code what}; "" without that run.
     */
    private String attentionItem(String file, String what) throws IOException {
        AttentionBenchResult run = read(file, AttentionBenchResult.class, what);
        return run == null ? "" : new AttentionStatus(source(file, run.date()), run, targets).item(linkBase);
    }

    /** No benchmark JSON holds the fault tests: their runs are in the GPU test log, so this item carries no figure. */
    private static String faults() {
        return "- fault handling: rank loss, checked mode, repeated init/close and a mixed soak, in the GPU tests.\n";
    }

    /** The run in {@code file}, whose hardware the introduction names for {@code item}; null where the file is not there. */
    private <T extends StoredResult> T read(String file, Class<T> type, String item) throws IOException {
        Path path = dir.resolve(file);
        if (!Files.isRegularFile(path)) {
            return null;
        }
        T run = StoredResult.read(path, type);
        measuredOn(run.hardware(), item);
        return run;
    }

    /** The run in {@code file}, named by its date and the commit {@link RunCommits} gives it. */
    private RunSource source(String file, String date) {
        return new RunSource(file, date, commits.of(file));
    }

    private String noRun(String item, String report) {
        return "- " + item + ": no committed run, see " + link(linkBase, report) + ";\n";
    }

    private void measuredOn(String machine, String item) {
        List<String> items = hardware.computeIfAbsent(machine == null || machine.isBlank() ? "not recorded" : machine, k -> new ArrayList<>());
        if (!items.contains(item)) {
            items.add(item);
        }
    }

    /** A Markdown link to {@code file} of the benchmarks folder (a report or a run's JSON), {@code linkBase} being that folder. */
    static String link(String linkBase, String file) {
        return "[" + file + "](" + linkBase + "/" + file + ")";
    }
}

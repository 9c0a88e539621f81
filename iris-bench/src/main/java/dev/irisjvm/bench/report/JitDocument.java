package dev.irisjvm.bench.report;

import dev.irisjvm.bench.jit.ExampleSource;
import dev.irisjvm.bench.jit.OverlapStyles;
import dev.irisjvm.bench.results.JitBenchResult;
import dev.irisjvm.bench.results.JitBenchResult.SourceTimes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN}: what run-time compilation costs the example kernel sources (from a run
 * of {@link dev.irisjvm.bench.jit.JitBench}, or "pending a GPU run" where there is none yet), the
 * device lines each overlap style adds to the plain GEMM (counted from the sources,
 * {@link OverlapStyles}), and the style-against-library timings, which need two GPUs and are
 * pending. No charts.
 *
 * <pre>{@code
 * new JitDocument(StoredResult.read(json, JitBenchResult.class), ExampleSource.allOnClassPath(), context).write(Path.of("docs/benchmarks"));
 * new JitDocument(null, ExampleSource.allOnClassPath(), context).write(dir);   // no run yet
 * }</pre>
 */
public final class JitDocument extends Document {
    public static final String MARKDOWN = "jit.md";
    /** The command that measures what this report shows as pending. */
    static final String COMMAND = "bin/iris-bench jit --out docs/benchmarks";
    static final String PENDING = "pending a GPU run: `" + COMMAND + "`";
    static final String STYLES_HEADING = "## Device lines each overlap style adds to the plain GEMM";
    /** The paper's names of the styles the sources mark. */
    private static final Map<String, String> STYLE_NAMES = Map.of("fused_sequential", "fused sequential", "bulk_synchronous",
            "bulk-synchronous", "producer_consumer", "producer–consumer", "wg_specialized", "workgroup-specialized");

    private final JitBenchResult run;
    private final OverlapStyles styles;

    /**
     * @param run     the run's JSON, or null where none was made yet
     * @param sources the example kernel sources whose markers give the device-line counts
     */
    public JitDocument(JitBenchResult run, List<ExampleSource> sources, Context context) {
        super(ReportKind.JIT, context);
        this.run = run;
        this.styles = OverlapStyles.of(sources);
    }

    @Override
    String markdown(Charts charts) {
        return header() + findings + compileSection() + stylesSection(styles) + againstLibrarySection();
    }

    private String header() {
        String title = "Run-time compilation of the example kernels";
        String intro = "What it costs to compile the examples' CUDA C++ at run time (`KernelCompiler`, NVRTC, against the shipped "
                + "device headers) and to load it again from the on-disk cache, whose key covers source, options, headers, "
                + "architecture, NVRTC and driver; how many lines of device code each overlap style adds to the plain GEMM; and, "
                + "pending two GPUs, what the styles cost against the library's fused kernel.";
        if (run == null) {
            return pendingHeader(title, intro, PENDING, COMMAND);
        }
        JitBenchResult.FirstCompile first = run.firstCompile();
        return new ReportHeader(title, intro, run)
                .item("architecture", "`" + run.architecture() + "`")
                .item("NVRTC", run.nvrtc() + " (`" + run.nvrtcLibrary() + "`)")
                .item("driver", run.driver())
                .item("repetitions", run.coldReps() + " compiles into fresh caches, then " + run.warmReps()
                        + " loads from a filled one, per source and variant")
                .item("caches in", "`" + run.cacheParent() + "`")
                .item("the process's first compile", first == null ? "—" : ms(first.ms()) + " ms (`" + first.source()
                        + "`, plain: NVRTC loaded, headers unpacked, before the timed compiles)")
                .end(context, run.command());
    }

    private String compileSection() {
        StringBuilder sb = new StringBuilder("## Compile and cached load per example kernel source\n\n");
        sb.append("Each source, plain and checked (`-DIRIS_CHECKED=1`, what `IRIS_CHECK` selects): compiled into a fresh cache folder "
                + "per repetition, so that nothing is reused (the shipped headers are unpacked into it first, timed apart: "
                + "\"headers\"; \"compile\" is `KernelCompiler.compile` after that, NVRTC and the cache write); then loaded from "
                + "the last of those caches per repetition (\"cache hit\": `compile` answered from the cache, key and file read; "
                + "\"module load\": the cubin loaded into the GPU and every kernel of the source looked up, so that lazy loading "
                + "defers nothing). Wall-clock milliseconds, median (min–max) over the repetitions; code lines by the rule below.\n\n");
        if (run == null) {
            return sb.append("Measurements ").append(PENDING).append(".\n\n").toString();
        }
        MarkdownTable t = new MarkdownTable("source", "example", "variant", "code lines", "kernels", "cubin", "headers, ms",
                "compile, ms", "cache hit, ms", "module load, ms");
        for (SourceTimes s : run.sources()) {
            t.row("`" + s.source() + "`", s.example(), s.variant(), s.codeLines() + " of " + s.lines(), s.kernels().size(),
                    Sizes.bytes(s.imageBytes()), spread(s.unpackMs()), spread(s.compileMs()), spread(s.cacheHitMs()),
                    spread(s.moduleLoadMs()));
        }
        sb.append(t.isEmpty() ? "No sources measured.\n" : t.render()).append('\n');
        Map<String, Set<String>> options = new LinkedHashMap<>();
        for (SourceTimes s : run.sources()) {
            options.computeIfAbsent(s.variant(), v -> new LinkedHashSet<>()).add(String.join(" ", s.options()));
        }
        sb.append("NVRTC options (`<cache>`: the fresh cache folder):\n\n");
        options.forEach((variant, lists) -> lists.forEach(o -> sb.append("- ").append(variant).append(": `").append(o).append("`\n")));
        return sb.append('\n').toString();
    }

    /** The device-line table from the sources' markers: the part of jit.md a unit test holds against the committed sources. */
    static String stylesSection(OverlapStyles styles) {
        StringBuilder sb = new StringBuilder(STYLES_HEADING).append("\n\n");
        sb.append("Counted from the committed sources, no GPU needed. Rule: ").append(OverlapStyles.RULE).append("\n\n");
        MarkdownTable t = new MarkdownTable("style", "source", "kernels", "shared sections reached", "own lines", "device lines added");
        for (OverlapStyles.Style s : styles.styles()) {
            t.row(STYLE_NAMES.getOrDefault(s.name(), s.name()) + " (`" + s.name() + "`)", "`" + s.source() + "`", code(s.kernels()),
                    s.shared().isEmpty() ? "—" : code(s.shared()), s.ownLines(), s.lines());
        }
        sb.append(t.isEmpty() ? "No source marks a style.\n" : t.render()).append('\n');
        List<String> plain = new ArrayList<>();
        for (OverlapStyles.Plain p : styles.plain()) {
            plain.add("`" + p.source() + "` " + p.lines() + " lines");
        }
        if (!plain.isEmpty()) {
            sb.append("The plain GEMM, the code outside the markers, counted for no style: ").append(String.join(", ", plain))
                    .append(".\n\n");
        }
        return sb.toString();
    }

    private static String againstLibrarySection() {
        return "## Overlap styles against the library's fused kernel, cuBLAS and NCCL\n\n"
                + "Pending: this table needs two GPUs, and holds no numbers until it has run on them. What it is to time, on "
                + "`AllScatterProblem`'s column-parallel layer: each style (fused sequential, `Example08GemmAllScatter`; "
                + "bulk-synchronous, producer–consumer and workgroup-specialized, `Example10OverlapStyles`) against the library's "
                + "own fused GEMM + all-scatter (`dev.irisjvm.kernels.fused.GemmAllScatter`, see [fused.md](fused.md)) and "
                + "against cuBLAS followed by an NCCL all-gather, measured in the same run.\n";
    }

    private static String code(List<String> names) {
        return names.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "));
    }

    /** "12.3 (11.9–14.0)": median (min–max). */
    private static String spread(List<Double> ms) {
        if (ms.isEmpty()) {
            return "—";
        }
        return ms(Stats.median(ms).getAsDouble()) + " (" + ms(Stats.min(ms).getAsDouble()) + "–" + ms(Stats.max(ms).getAsDouble()) + ")";
    }

    private static String ms(double value) {
        return Sizes.number(value);
    }
}

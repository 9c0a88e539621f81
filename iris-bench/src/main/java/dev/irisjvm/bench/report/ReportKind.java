package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OpNames;
import dev.irisjvm.bench.jit.ExampleSource;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.bench.results.JitBenchResult;
import dev.irisjvm.bench.results.MoeSweepResult;
import dev.irisjvm.bench.results.NodesSweepResult;
import dev.irisjvm.bench.results.StepSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import dev.irisjvm.bench.results.SweepResult;
import java.util.function.BiFunction;

/**
 * The reports there are, each with the files of its folder: the raw JSON it is rendered from, the
 * Markdown it writes, the hand-written findings it includes and the commands of the run that made
 * the JSON ({@code <prefix>-commands.txt}: lines {@code run: ...} and {@code jmh: ...}), and the
 * document that renders it.
 */
public enum ReportKind {
    GEMM("gemm", "gemm-sweep.json", GemmDocument.MARKDOWN, "gemm-findings.md", GemmSweepResult.class, GemmDocument::new),
    /** The GEMM on a named suite of many shapes ({@code bin/iris-bench gemm --suite models}). */
    GEMM_SUITE("gemm-suite", "gemm-suite.json", GemmSuiteDocument.MARKDOWN, "gemm-suite-findings.md", GemmSweepResult.class,
            GemmSuiteDocument::new),
    CCL("ccl", "ccl-sweep.json", CclDocument.MARKDOWN, "collectives-findings.md", SweepResult.class, CclDocument::new),
    FUSED("fused", "fused-sweep.json", FusedDocument.MARKDOWN, "fused-findings.md", FusedSweepResult.class, FusedDocument::new),
    ATTENTION("attention", "attention-bench.json", AttentionDocument.MARKDOWN, "attention-findings.md", AttentionBenchResult.class,
            AttentionDocument::new),
    RMA("rma", "rma-sweep.json", RmaDocument.MARKDOWN, "rma-findings.md", SweepResult.class, RmaDocument::new),
    JIT("jit", "jit-bench.json", JitDocument.MARKDOWN, "jit-findings.md", JitBenchResult.class,
            (run, context) -> new JitDocument(run, ExampleSource.allOnClassPath(), context)),
    MOE("moe", "moe-sweep.json", MoeDocument.MARKDOWN, "moe-findings.md", MoeSweepResult.class, MoeDocument::new),
    /** Forward + backward of a tensor-parallel MLP, fused against cuBLAS then NCCL ({@code bin/iris-bench step}). */
    STEP("training-step", "training-step.json", StepDocument.MARKDOWN, "training-step-findings.md", StepSweepResult.class,
            StepDocument::new),
    /** World collectives over several nodes, two levels against one flat NCCL collective ({@code bin/iris-bench nodes}). */
    NODES("nodes", "nodes-sweep.json", NodesDocument.MARKDOWN, "nodes-findings.md", NodesSweepResult.class, NodesDocument::new);

    private final String prefix;
    private final String sweepFile;
    private final String markdown;
    private final String findingsFile;
    private final Class<? extends StoredResult> runType;
    private final BiFunction<StoredResult, Document.Context, Document> document;

    <T extends StoredResult> ReportKind(String prefix, String sweepFile, String markdown, String findingsFile, Class<T> runType,
                                        BiFunction<T, Document.Context, Document> newDocument) {
        this.prefix = prefix;
        this.sweepFile = sweepFile;
        this.markdown = markdown;
        this.findingsFile = findingsFile;
        this.runType = runType;
        this.document = (run, context) -> newDocument.apply(runType.cast(run), context);
    }

    /**
     * The kind's name on the command line of {@code iris-bench report} and the prefix of its copied
     * files: gemm, gemm-suite, ccl, fused, attention, rma, jit, moe, training-step, nodes.
     */
    public String prefix() {
        return prefix;
    }

    /** The run's raw JSON as the report folder keeps it. */
    public String sweepFile() {
        return sweepFile;
    }

    public String markdown() {
        return markdown;
    }

    public String findingsFile() {
        return findingsFile;
    }

    /** What {@link #sweepFile()} holds. */
    Class<? extends StoredResult> runType() {
        return runType;
    }

    /** The document of {@code run}, a {@link #runType()} (null where the kind {@link #runOptional() stands without one}). */
    Document document(StoredResult run, Document.Context context) {
        return document.apply(run, context);
    }

    public String commandsFile() {
        return prefix + "-commands.txt";
    }

    /**
     * Whether the report stands without a run's JSON: jit.md's device-line counts come from the
     * example sources, and its measured parts then say that they are pending a GPU run; moe.md,
     * training-step.md and nodes.md then say what the benchmark measures and that the comparison is
     * pending a run.
     */
    public boolean runOptional() {
        return this == JIT || this == MOE || this == STEP || this == NODES;
    }

    /** Whether the report shows the JMH results of its run. */
    boolean readsJmh() {
        return this == CCL || this == FUSED || this == RMA;
    }

    /** The glob of the JMH result files the folder keeps, one per rank. */
    public String jmhGlob() {
        return prefix + "-jmh-rank*.json";
    }

    /** The kind named {@code name} (any case). */
    public static ReportKind of(String name) {
        return OpNames.byId(values(), ReportKind::prefix, name,
                "unknown report '" + name + "'; known: gemm, gemm-suite, ccl, fused, attention, rma, jit, moe, training-step, nodes");
    }
}

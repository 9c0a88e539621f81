package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.report.CheckedPoints.median;
import static dev.irisjvm.bench.report.CheckedPoints.time;
import static dev.irisjvm.bench.report.CheckedPoints.timed;

import dev.irisjvm.bench.results.StepMeasurement;
import dev.irisjvm.bench.results.StepSweepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} from one run of the training-step benchmark
 * ({@code dev.irisjvm.bench.step.StepSweep}): forward + backward of a tensor-parallel,
 * sequence-parallel MLP with the library's fused operations against the same step with cuBLAS then
 * NCCL in sequence, the speedup (the baseline's median ÷ the fused step's) against the target, each
 * part alone (the six GEMMs by cuBLAS and by the library, NCCL's four collectives), what the
 * overlap bought and the output check. A run whose ranks shared a GPU is reported as such, with its
 * times and check but no ratio and no verdict. Without a run, the report says what the benchmark
 * measures, its command, and that the comparison is pending.
 *
 * <pre>{@code
 * new StepDocument(run, context).write(Path.of("docs/benchmarks"));
 * new StepDocument(null, context).write(Path.of("docs/benchmarks"));   // no run yet
 * }</pre>
 */
public final class StepDocument extends Document {
    public static final String MARKDOWN = "training-step.md";
    /** The command that runs the benchmark and writes this report. */
    static final String COMMAND = "bin/iris-bench step -n 2 --out docs/benchmarks";
    static final String TITLE = "Iris training-step benchmark: a tensor-parallel MLP, forward and backward";
    static final String INTRO = "Forward + backward of a tensor-parallel, sequence-parallel transformer MLP (by default Llama-3 70B's: "
            + "M = 8192 tokens, H = 8192, F = 28672, on 2 ranks) with the library's fused operations (`AllGatherGemm`, "
            + "`GemmReduceScatter`) against the same step with cuBLAS then NCCL in sequence, measured in the same run on every rank.";
    /** The shape the target is stated for (M × H × F), Llama-3 70B's MLP at 8192 tokens. */
    static final String TARGET_SHAPE = "8192 × 8192 × 28672";
    /** The implementations in the order the tables list them. */
    static final List<String> IMPLS = List.of(StepMeasurement.FUSED, StepMeasurement.BASELINE, StepMeasurement.CUBLAS_GEMMS,
            StepMeasurement.IRIS_GEMMS, StepMeasurement.NCCL);

    private final StepSweepResult run;
    private final BenchmarkTargets.TrainingStep target;

    /** One shape on one world: each implementation's point, null where it was not run. */
    record Row(int tokens, int hidden, int ffn, int world, Map<String, StepMeasurement> impls) {
        StepMeasurement get(String impl) {
            return impls.get(impl);
        }

        StepMeasurement fused() {
            return get(StepMeasurement.FUSED);
        }

        StepMeasurement baseline() {
            return get(StepMeasurement.BASELINE);
        }

        /** The baseline's median ÷ {@code m}'s: above 1 {@code m} is faster; NaN where either was not timed. */
        double ratio(StepMeasurement m) {
            StepMeasurement b = baseline();
            return m != null && m.timed() && b != null && b.timed() ? b.medianUs() / m.medianUs() : Double.NaN;
        }

        /** The fused step's speedup over the baseline, NaN where either is missing or the fused output was wrong. */
        double speedup() {
            return fused() != null && fused().checkFailed() ? Double.NaN : ratio(fused());
        }

        boolean checkFailed() {
            return impls.values().stream().anyMatch(StepMeasurement::checkFailed);
        }

        /** "8192 × 8192 × 28672" (M × H × F). */
        String label() {
            return tokens + " × " + hidden + " × " + ffn;
        }
    }

    /** @param run the run, or null where none was made yet */
    public StepDocument(StepSweepResult run, Context context) {
        super(ReportKind.STEP, context);
        this.run = run;
        this.target = context.targets().trainingStep();
    }

    /** One row per shape and world, in the order the run measured them. */
    List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        CheckedPoints.byImpl(run.measurements(), m -> List.of(m.tokens(), m.hidden(), m.ffn(), m.world()))
                .forEach((k, impls) -> rows.add(new Row(k.get(0), k.get(1), k.get(2), k.get(3), impls)));
        return rows;
    }

    /** A row's verdict against the target. */
    String status(Row r) {
        return Verdict.atLeast(r.speedup(), target.minSpeedup(), r.checkFailed(), run.sharedGpu());
    }

    @Override
    String markdown(Charts charts) {
        if (run == null) {
            return pendingOnTwoGpus(TITLE, INTRO, COMMAND, method());
        }
        List<Row> rows = rows();
        return header(rows) + targets(rows) + findings + times(rows) + overlap(rows) + method() + checks(rows);
    }

    private String header(List<Row> rows) {
        String shapes = rows.isEmpty() ? "—" : rows.stream().map(r -> "M × H × F = " + r.label() + "; per rank " + r.tokens() / r.world()
                + " tokens (sequence parallel) and F / " + r.world() + " = " + r.ffn() / r.world() + " (tensor parallel)")
                .collect(Collectors.joining("; "));
        return new ReportHeader(TITLE, INTRO, run)
                .item("ranks", run.worldSize() + SharedGpus.ranks(run))
                .item("shape", shapes + "; BF16 activations and weights, F32 weight gradients; seed " + run.seed())
                .item("timing", run.warmup() + " warm-up and " + run.reps() + " timed steps per implementation and round, "
                        + run.rounds() + " round(s)")
                .end(context, run.command());
    }

    private String targets(List<Row> rows) {
        String goal = GemmDocument.capitalized(target.source()) + ": forward + backward with the fused operations at least "
                + target.minSpeedup() + " × as fast as the same step with cuBLAS then NCCL in sequence (speedup = the baseline's "
                + "median ÷ the fused step's), stated for Llama-3 70B's MLP (" + TARGET_SHAPE + ") on " + target.world() + " ranks.";
        if (run.sharedGpu()) {
            MarkdownTable t = new MarkdownTable("M × H × F", "ranks", "target", "status");
            for (Row r : rows) {
                t.row(r.label(), r.world(), "≥ " + target.minSpeedup() + " ×", status(r));
            }
            return SharedGpus.targetSection(goal, run, t);
        }
        MarkdownTable t = new MarkdownTable("M × H × F", "ranks", "fused µs", "baseline µs", "speedup", "target", "status");
        Tally tally = new Tally();
        for (Row r : rows) {
            t.row(r.label(), r.world(), median(r.fused()), median(r.baseline()), Sizes.ratio3(r.speedup()), "≥ " + target.minSpeedup() + " ×",
                    tally.count(status(r)));
        }
        String summary = tally.summary("point(s) reach the target", "No point could be judged.");
        String world = rows.stream().allMatch(r -> r.world() == target.world()) ? ""
                : " The target is stated for " + target.world() + " ranks; this run had " + run.worldSize() + ".";
        String shape = rows.stream().allMatch(r -> r.label().equals(TARGET_SHAPE)) ? ""
                : " At a shape other than " + TARGET_SHAPE + " the verdict applies the same bound to a step the target does not name.";
        return "## Target\n\n" + goal + " " + summary + world + shape + "\n\n" + t.renderOrNone()
                + "\nSpeedups to three decimals, so that " + Sizes.justUnder(target.minSpeedup(), "0.001") + " does not read as a passing "
                + Sizes.twoDecimals(target.minSpeedup()) + "; a verdict compares the unrounded "
                + "ratio.\n\n";
    }

    private String times(List<Row> rows) {
        boolean compare = !run.sharedGpu();
        StringBuilder sb = new StringBuilder("## Times\n\nMedian per step in µs over every round's timed steps, the slowest rank per "
                + "step, with the fastest and slowest step in brackets, and each round's median in the order the rounds ran"
                + (compare ? ". TFLOP/s per rank: the six GEMMs' operations on one rank ÷ that median; baseline ÷ this: the baseline's "
                + "median ÷ that row's." : SharedGpus.TIMES)
                + "\n\n");
        for (Row r : rows) {
            MarkdownTable t = new MarkdownTable("implementation", "what it runs", "µs", "round medians µs", "TFLOP/s per rank",
                    "baseline ÷ this").without(!compare, "TFLOP/s per rank", "baseline ÷ this");
            for (String impl : IMPLS) {
                StepMeasurement m = r.get(impl);
                t.row(impl, what(impl), time(m), m == null ? "—" : Sizes.numbers(m.roundMediansUs()), tflops(m), Sizes.ratio(r.ratio(m)));
            }
            if (rows.size() > 1) {
                sb.append("### ").append(r.label()).append(" on ").append(r.world()).append(" ranks\n\n");
            }
            sb.append(t.render()).append('\n');
        }
        return sb.toString();
    }

    /**
     * The time the fused step saved against the time of NCCL's collectives alone: what a perfect
     * overlap could save if the fused GEMMs were as fast as cuBLAS's. The GEMMs alone separate the
     * two causes, so each step's time above its own GEMMs' is shown too.
     */
    private String overlap(List<Row> rows) {
        if (run.sharedGpu()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("## What the overlap bought\n\n");
        for (Row r : rows) {
            StepMeasurement fused = r.fused();
            StepMeasurement base = r.baseline();
            StepMeasurement nccl = r.get(StepMeasurement.NCCL);
            String at = rows.size() > 1 ? r.label() + " on " + r.world() + " ranks: " : "";
            if (!timed(fused) || !timed(base) || !timed(nccl)) {
                sb.append(at).append("Not measured: it needs the fused step, the baseline and NCCL alone timed.\n\n");
                continue;
            }
            double saved = base.medianUs() - fused.medianUs();
            sb.append(at).append("The baseline took ").append(Sizes.number(base.medianUs())).append(" µs per step, the fused step ")
                    .append(Sizes.number(fused.medianUs())).append(" µs: ").append(saved >= 0 ? Sizes.number(saved) + " µs saved"
                            : Sizes.number(-saved) + " µs lost").append(" per step, against ").append(Sizes.number(nccl.medianUs()))
                    .append(" µs for NCCL's four collectives alone").append(saved >= 0 ? " (" + percent(saved / nccl.medianUs())
                            + " of it)." : ".");
            StepMeasurement cublas = r.get(StepMeasurement.CUBLAS_GEMMS);
            StepMeasurement iris = r.get(StepMeasurement.IRIS_GEMMS);
            if (timed(cublas) && timed(iris)) {
                sb.append(" The six GEMMs alone took ").append(Sizes.number(cublas.medianUs())).append(" µs with cuBLAS and ")
                        .append(Sizes.number(iris.medianUs())).append(" µs with the library, so beyond its own GEMMs the baseline "
                                + "spent ").append(Sizes.number(base.medianUs() - cublas.medianUs())).append(" µs and the fused step ")
                        .append(Sizes.number(fused.medianUs() - iris.medianUs())).append(" µs (communication left exposed, "
                                + "and the SiLU and SiLU' kernels).");
            }
            sb.append("\n\n");
        }
        return sb.toString();
    }

    private String method() {
        return "## Method\n\n"
                + "- **The step**: an MLP `y = SiLU(x W1ᵀ) W2ᵀ`, sequence parallel (each rank holds M / ranks tokens of x, dY, y "
                + "and dX) and tensor parallel (each rank holds F / ranks rows of W1 and columns of W2), by default Llama-3 70B's "
                + "(`--shape 8192x8192x28672`: M × H × F). Forward: all-gather x → up GEMM (X·W1ᵀ) → SiLU → down GEMM (A·W2ᵀ) → "
                + "reduce-scatter into y. Backward: all-gather dY → dA = dY·W2 → dW2 += dYᵀ·A → SiLU' → dX = dH·W1 → "
                + "reduce-scatter into dX → dW1 += dHᵀ·X. BF16 inputs uniform and generated on the GPU from the seed, "
                + "F32 weight gradients accumulated (β = 1) as a training loop does.\n"
                + "- **Fused**: the all-gather and its GEMM as one `AllGatherGemm`, the GEMM and its reduce-scatter as one "
                + "`GemmReduceScatter` (forward and backward each), the weight gradients with `Gemm` and the KM_KN layouts "
                + "(A stored K × M, so dYᵀ and dHᵀ are never transposed in memory).\n"
                + "- **Baseline**: what a JVM user without the library runs: `ncclAllGather`, cuBLAS GEMMs and "
                + "`ncclReduceScatter` in sequence on one stream.\n"
                + "- **Both**: the SiLU and SiLU' kernels are the same run-time compiled kernels in both steps, on the same tensors.\n"
                + "- **Parts alone**: `cublas_gemms` and `iris_gemms` the six GEMMs by cuBLAS and by the library's `Gemm` without "
                + "communication, `nccl` the four collectives without GEMMs.\n"
                + "- **Timing**: CUDA events around each step, steps queued behind a gate so that no host launch time is inside, "
                + "an untimed device barrier of all ranks before each step. Per step the slowest rank counts. The implementations "
                + "take turns in an order that changes every round.\n"
                + "- **Check**, after the timing: one fused step and one baseline step on the same inputs into poisoned outputs; "
                + "y, dX, dW1 and dW2 of the fused step compared with the baseline's, within a few BF16 roundings of the "
                + "baseline's largest magnitude.\n"
                + "- **Shared GPUs**: where ranks share a GPU the run still checks the outputs and records the sharing; the times "
                + "then measure the ranks' turns on each GPU, and the report shows no ratio and judges no target.\n\n";
    }

    private String checks(List<Row> rows) {
        List<String> bad = rows.stream().flatMap(r -> IMPLS.stream().map(impl -> CheckedPoints.failure(
                rows.size() > 1 ? r.label() + " " : "", r.get(impl)))).filter(Objects::nonNull).toList();
        long points = rows.stream().flatMap(r -> IMPLS.stream().map(r::get)).filter(Objects::nonNull).count();
        boolean allChecked = rows.stream().allMatch(r -> r.fused() != null && StepMeasurement.OK.equals(r.fused().check()));
        return outputChecks("Output check", bad, "All " + points + " point(s) ran" + (allChecked
                ? "; the fused step's y, dX, dW1 and dW2 matched the baseline's." : "; the fused step was not checked."));
    }

    private static String what(String impl) {
        return switch (impl) {
            case StepMeasurement.FUSED -> "the step: AllGatherGemm, GemmReduceScatter, Gemm";
            case StepMeasurement.BASELINE -> "the step: cuBLAS and NCCL in sequence";
            case StepMeasurement.CUBLAS_GEMMS -> "the six GEMMs alone, cuBLAS";
            case StepMeasurement.IRIS_GEMMS -> "the six GEMMs alone, Gemm";
            case StepMeasurement.NCCL -> "the four collectives alone, NCCL";
            default -> impl;
        };
    }

    /** The step's GEMM work at that time; NCCL alone does none. */
    private static String tflops(StepMeasurement m) {
        if (!timed(m) || m.flopsPerRank() <= 0 || StepMeasurement.NCCL.equals(m.impl())) {
            return "—";
        }
        return Sizes.number(m.flopsPerRank() / m.medianUs() / 1e6);
    }

    private static String percent(double f) {
        return String.format(Locale.ROOT, "%.0f %%", 100 * f);
    }
}

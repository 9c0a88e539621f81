package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.report.CheckedPoints.time;

import dev.irisjvm.bench.results.MoeMeasurement;
import dev.irisjvm.bench.results.MoeSweepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes {@value #MARKDOWN} from one MoE sweep ({@code dev.irisjvm.bench.moe.MoeSweep}): per model,
 * token count and operation, the library's time (MoeDispatch / MoeCombine, and MoeLowLatency
 * where measured) against NCCL all-to-all-v moving the same rows, the speedup (NCCL's time ÷ the
 * library's) against the targets, the expert layer fused and fed by the dispatch against the same
 * layer in sequence, and the output checks. A run whose ranks shared a GPU is
 * reported as such, with its times and checks but no speedup and no verdict. Without a run, the
 * report says what the benchmark measures, its command, and that the comparison is pending.
 *
 * <pre>{@code
 * new MoeDocument(sweep, context).write(Path.of("docs/benchmarks"));
 * new MoeDocument(null, context).write(Path.of("docs/benchmarks"));   // no run yet
 * }</pre>
 */
public final class MoeDocument extends Document {
    public static final String MARKDOWN = "moe.md";
    /** The command that runs the benchmark and writes this report. */
    static final String COMMAND = "bin/iris-bench moe -n 2 --out docs/benchmarks";
    static final String TITLE = "Iris MoE dispatch and combine benchmarks";
    static final String INTRO = "MoE dispatch and combine of `dev.irisjvm.kernels.moe` (`MoeDispatch`, `MoeCombine`, and "
            + "`MoeLowLatency` for small T) against NCCL all-to-all-v moving the same rows (one group of ncclSend/ncclRecv per "
            + "direction, `NcclCommunicator.sendRecv`), measured in the same run on every rank.";

    private final MoeSweepResult sweep;
    private final BenchmarkTargets.Moe target;

    /** One model, token count and operation: each implementation's point, null where it was not run. */
    record Row(String model, int tokens, String op, MoeMeasurement iris, MoeMeasurement lowLatency, MoeMeasurement nccl) {
        /** The faster of the library's usable modes (timed, output not failed), or null. */
        MoeMeasurement best() {
            MoeMeasurement a = usable(iris) ? iris : null;
            MoeMeasurement b = usable(lowLatency) ? lowLatency : null;
            if (a == null || b == null) {
                return a != null ? a : b;
            }
            return b.medianUs() < a.medianUs() ? b : a;
        }

        /** NCCL's median ÷ {@code m}'s: above 1 the library is faster; NaN where either is missing. */
        double speedup(MoeMeasurement m) {
            return usable(m) && nccl != null && nccl.timed() ? nccl.medianUs() / m.medianUs() : Double.NaN;
        }

        boolean checkFailed() {
            return points().stream().anyMatch(MoeMeasurement::checkFailed);
        }

        List<MoeMeasurement> points() {
            return present(iris, lowLatency, nccl);
        }

        private static boolean usable(MoeMeasurement m) {
            return m != null && m.timed() && !m.checkFailed();
        }
    }

    /** @param sweep the run, or null where none was made yet */
    public MoeDocument(MoeSweepResult sweep, Context context) {
        super(ReportKind.MOE, context);
        this.sweep = sweep;
        this.target = context.targets().moe();
    }

    /** One model and token count of the expert layer: the sequence (the baseline), fused, fed; null where not run. */
    record LayerRow(String model, int tokens, MoeMeasurement sequence, MoeMeasurement fused, MoeMeasurement fed) {
        /** The sequence's median ÷ {@code m}'s: above 1 the fused layer is faster; NaN where either is missing or failed. */
        double speedup(MoeMeasurement m) {
            return Row.usable(m) && Row.usable(sequence) ? sequence.medianUs() / m.medianUs() : Double.NaN;
        }

        /** The faster of the two fused ways, by its speedup; NaN where neither was measured. */
        double best() {
            double a = speedup(fused);
            double b = speedup(fed);
            return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
        }

        List<MoeMeasurement> points() {
            return present(sequence, fused, fed);
        }
    }

    private static List<MoeMeasurement> present(MoeMeasurement... points) {
        return java.util.stream.Stream.of(points).filter(Objects::nonNull).toList();
    }

    /** The expert layer's rows in the order the sweep ran them. */
    List<LayerRow> layerRows() {
        return byImpl(true).stream().map(impls -> {
            MoeMeasurement any = impls.values().iterator().next();
            return new LayerRow(any.model(), any.tokens(), impls.get(MoeMeasurement.IRIS), impls.get(MoeMeasurement.IRIS_FUSED),
                    impls.get(MoeMeasurement.IRIS_FED));
        }).toList();
    }

    /** The sweep's points of the expert layer ({@code layer}) or of the exchange, per model, token count and operation. */
    private List<Map<String, MoeMeasurement>> byImpl(boolean layer) {
        List<MoeMeasurement> points = sweep.measurements().stream().filter(m -> MoeMeasurement.LAYER.equals(m.op()) == layer).toList();
        return List.copyOf(CheckedPoints.byImpl(points, m -> m.model() + " " + m.tokens() + " " + m.op()).values());
    }

    /** A layer row's verdict: the faster fused way against the target. */
    String status(LayerRow r) {
        return Verdict.atLeast(r.best(), target.minLayerSpeedup(), r.points().stream().anyMatch(MoeMeasurement::checkFailed),
                sweep.sharedGpu());
    }

    /** The rows of the exchange (dispatch, combine, both) in the order the sweep ran them. */
    List<Row> rows() {
        return byImpl(false).stream().map(impls -> {
            MoeMeasurement any = impls.values().iterator().next();
            return new Row(any.model(), any.tokens(), any.op(), impls.get(MoeMeasurement.IRIS), impls.get(MoeMeasurement.IRIS_LL),
                    impls.get(MoeMeasurement.NCCL));
        }).toList();
    }

    /** The rows a target applies to: dispatch and combine at the token counts the targets name. */
    List<Row> judgedRows() {
        return rows().stream().filter(r -> !MoeMeasurement.DISPATCH_COMBINE.equals(r.op()) && !Double.isNaN(target.minRatio(r.tokens())))
                .toList();
    }

    /** A target row's verdict. */
    String status(Row r) {
        return Verdict.atLeast(r.speedup(r.best()), target.minRatio(r.tokens()), r.checkFailed(), sweep.sharedGpu());
    }

    @Override
    String markdown(Charts charts) {
        if (sweep == null) {
            return pendingOnTwoGpus(TITLE, INTRO, COMMAND, method());
        }
        List<Row> rows = rows();
        List<LayerRow> layerRows = layerRows();
        return header() + targets() + findings + times(rows) + layer(layerRows) + method() + checks(rows, layerRows);
    }

    private String header() {
        return new ReportHeader(TITLE, INTRO, sweep)
                .item("ranks", sweep.worldSize() + SharedGpus.ranks(sweep))
                .item("layers", "DeepSeek-V3 (H 7168, top-8 of 256 experts), Mixtral (H 4096, top-2 of 8); BF16 rows, uniform routing, "
                        + "seed " + sweep.seed())
                .item("timing", sweep.warmup() + " warm-up and " + sweep.reps() + " timed calls per implementation, case and round, "
                        + sweep.rounds() + " round(s)")
                .end(context, sweep.command());
    }

    private String targets() {
        String goal = GemmDocument.capitalized(target.source()) + ": for dispatch and for combine, the library at least "
                + target.minRatioSmall() + " × NCCL's speed (NCCL's median time ÷ the library's) at every T ≤ " + target.smallTokens()
                + " tokens per rank, and at least " + target.minRatioLarge() + " × at T = " + target.largeTokens()
                + ". The library's figure is its faster mode (MoeDispatch / MoeCombine, or MoeLowLatency where measured). NCCL's "
                + "combine is its return transfer alone, without the weighted sum (which favours NCCL).";
        List<Row> rows = judgedRows();
        if (sweep.sharedGpu()) {
            MarkdownTable t = new MarkdownTable("model", "operation", "T", "target", "status");
            for (Row r : rows) {
                t.row(r.model(), r.op(), r.tokens(), "≥ " + target.minRatio(r.tokens()) + " ×", status(r));
            }
            return SharedGpus.targetSection(goal, sweep, t);
        }
        MarkdownTable t = new MarkdownTable("model", "operation", "T", "library µs", "mode", "NCCL µs", "NCCL ÷ library", "target",
                "status");
        Tally tally = new Tally();
        for (Row r : rows) {
            MoeMeasurement best = r.best();
            t.row(r.model(), r.op(), r.tokens(), CheckedPoints.median(best), best == null ? "—" : best.impl(),
                    CheckedPoints.median(r.nccl()), Sizes.ratio(r.speedup(best)), "≥ " + target.minRatio(r.tokens()) + " ×",
                    tally.count(status(r)));
        }
        String summary = tally.summary("point(s) reach their target", rows.size(), "not measured", "No point could be judged.");
        return "## Target\n\n" + goal + " " + summary + "\n\n" + t.renderOrNone()
                + "\nRatios to two decimals; a verdict compares the unrounded ratio.\n\n";
    }

    private String times(List<Row> rows) {
        boolean ratios = !sweep.sharedGpu();
        StringBuilder sb = new StringBuilder("## Times\n\nMedian per call in µs over every round's timed calls, the slowest rank per "
                + "call, with the fastest and slowest call in brackets" + (ratios ? "; × is NCCL's median ÷ that column's."
                : SharedGpus.TIMES) + "\n\n");
        for (String model : rows.stream().map(Row::model).distinct().toList()) {
            MarkdownTable t = new MarkdownTable("T", "operation", "iris µs", "iris_ll µs", "NCCL µs", "iris ×", "iris_ll ×")
                    .without(!ratios, "iris ×", "iris_ll ×");
            for (Row r : rows) {
                if (!r.model().equals(model)) continue;
                t.row(r.tokens(), r.op(), time(r.iris()), time(r.lowLatency()), time(r.nccl()), Sizes.ratio(r.speedup(r.iris())),
                        Sizes.ratio(r.speedup(r.lowLatency())));
            }
            sb.append("### ").append(model).append("\n\n").append(t.render()).append('\n');
        }
        return sb.toString();
    }

    private String layer(List<LayerRow> rows) {
        if (rows.isEmpty()) {
            return "";
        }
        boolean ratios = !sweep.sharedGpu();
        StringBuilder sb = new StringBuilder("## Expert layer\n\nDispatch, one H × H GEMM per expert (`MoeExpertGemm`, n = H) and "
                + "combine: in sequence (`gemm` between `MoeDispatch` and `MoeCombine`), fused (dispatch, then `gemmAndCombine`: combine "
                + "as the GEMM's epilogue) and fed (`forward`: the GEMM starting each tile as its rows arrive, combine as its "
                + "epilogue). Median µs per call, the slowest rank per call" + (ratios ? "; × is the sequence's median ÷ that column's; "
                + GemmDocument.capitalized(target.source()) + "'s target: the faster fused way at least " + target.minLayerSpeedup()
                + " ×." : ". The ranks shared GPUs: nothing is compared.") + "\n\n");
        MarkdownTable t = new MarkdownTable("model", "T", "sequence µs", "fused µs", "fed µs", "fused ×", "fed ×", "status")
                .without(!ratios, "fused ×", "fed ×");
        for (LayerRow r : rows) {
            t.row(r.model(), r.tokens(), time(r.sequence()), time(r.fused()), time(r.fed()), Sizes.ratio(r.speedup(r.fused())),
                    Sizes.ratio(r.speedup(r.fed())), status(r));
        }
        return sb.append(t.render()).append('\n').toString();
    }

    private String method() {
        return "## Method\n\n"
                + "- **Cases**: DeepSeek-V3's layer (H 7168, top-8 of 256 experts) and Mixtral's (H 4096, top-2 of 8), BF16 rows, "
                + "by default at T = 128, 256, 512, 1024, 2048, 4096, 8192 and 16384 tokens per rank (`--tokens`), the "
                + "low-latency mode up to T = 512 (`--ll-max-tokens`); every operation alone and dispatch + combine.\n"
                + "- **Routing**: every token of every rank picks its top-k experts, distinct, uniformly at random from a fixed seed; "
                + "weights uniform in [0, 1). Every rank generates every rank's routing on the host, as NCCL's path needs the counts "
                + "there. The experts' capacity is the most rows any expert gets, rounded up to whole tiles of 128 rows, so nothing "
                + "drops.\n"
                + "- **Library**: `MoeDispatch.dispatch` (count exchange, then the rows, a tile of 128 at a time), `MoeCombine.combine` of "
                + "the receive buffer itself (identity experts: the weighted sum is done, the expert computation is left out), "
                + "and both back to back; `MoeLowLatency` the same for small T.\n"
                + "- **Expert layer** (up to `--layer-max-tokens`): one H × H weight per local expert, uniform in ±1/√H. The "
                + "three ways are checked against each other once, bit for bit (their values against a double reference are the "
                + "GPU tests').\n"
                + "- **NCCL**: what a JVM user without the library runs: each route's token row packed per destination rank in "
                + "route order (once, untimed), then one all-to-all-v (a group of ncclSend/ncclRecv) to the experts' ranks; combine "
                + "is the return all-to-all-v alone. There is no weighted-sum kernel to add after it, so NCCL's combine omits the sum: "
                + "the comparison favours NCCL.\n"
                + "- **Timing**: CUDA events around each call, calls queued behind a gate so that no host launch time is inside, an "
                + "untimed device barrier of all ranks before each call; a combine's own dispatch runs before the barrier, untimed. "
                + "Per call the slowest rank counts. The implementations take turns in an order that changes every round.\n"
                + "- **Checks**, once per case before timing: NCCL's rows there and back unchanged; dispatch's received rows equal "
                + "bit for bit NCCL's received rows regrouped by local expert, its counts the host's, nothing dropped; combine's "
                + "output the weighted sums of the tokens, on the host, within bf16's rounding.\n"
                + "- **Shared GPUs**: where ranks share a GPU the run still checks the outputs and records the sharing; the times "
                + "then measure the ranks' turns on each GPU, and the report shows no speedup and judges no target.\n\n";
    }

    private String checks(List<Row> rows, List<LayerRow> layerRows) {
        List<String> bad = new ArrayList<>();
        List<MoeMeasurement> all = new ArrayList<>();
        rows.forEach(r -> all.addAll(r.points()));
        layerRows.forEach(r -> all.addAll(r.points()));
        for (MoeMeasurement m : all) {
            if (m.checkFailed() || !m.timed()) {
                bad.add("- " + m.model() + " T=" + m.tokens() + " " + m.op() + " " + m.impl() + ": " + m.check());
            }
        }
        return outputChecks("Output checks", bad, "All " + all.size() + " point(s) passed their checks.");
    }
}

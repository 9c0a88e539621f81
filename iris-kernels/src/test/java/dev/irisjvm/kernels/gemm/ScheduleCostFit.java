package dev.irisjvm.kernels.gemm;

import dev.irisjvm.kernels.gemm.PlanTimings.Shape;
import dev.irisjvm.kernels.gemm.PlanTimings.Timed;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Tries k-block costs for tiles the rule does not take yet against GemmPlanTimes' timings, no GPU:
 * for each cost on a grid, the named tiles join the rule's ({@link GemmTile#choices}, or for 9 to 48
 * rows its swapped tile, {@link GemmTile#swappedFor}; where the shape can use them, {@link
 * GemmTile#all}) at that cost, and the rule's plan of every timed shape is judged against the
 * fastest plan timed for it (as {@link RuleAgainstPlanTimesTest} judges today's rule; shapes of at
 * most {@link SkinnyGemm#MAX_M} rows, which the skinny kernels can take, among our other plans).
 * The table then says which cost keeps the rule's plans nearest the fastest, and on how many
 * shapes the tiles are chosen; a second table lists each shape at the best cost, beside the skinny
 * kernels' and cuBLASLt's times where they were timed.
 *
 * <pre>
 * java -cp 'lib/*' dev.irisjvm.kernels.gemm.ScheduleCostFit SHORT_THIN_1X4,SHORT_THIN_4X1 0.08:0.20:0.01 plans.json [more.json]
 * </pre>
 */
public final class ScheduleCostFit {
    private static final int SMS = 132;

    private ScheduleCostFit() {
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length < 3) {
            System.err.println("usage: ScheduleCostFit TILE[,TILE...] FROM:TO:STEP PLANS.json...");
            System.exit(2);
        }
        Set<GemmTile> fitted = new LinkedHashSet<>();
        for (String name : argv[0].split(",")) {
            fitted.add(GemmTile.valueOf(name));
        }
        double[] grid = Arrays.stream(argv[1].split(":")).mapToDouble(Double::parseDouble).toArray();
        List<Path> runs = Arrays.stream(argv).skip(2).map(Path::of).toList();
        Map<Shape, List<Timed>> timings = PlanTimings.latest(runs, Function.identity());
        double best = bestCost(timings, fitted, grid[0], grid[1], grid[2], System.out);
        System.out.printf(Locale.ROOT, "%nat %.3f (the best geometric mean):%n", best);
        judge(timings, fitted, best, System.out);
    }

    /** The cost on the grid [from, to] by step whose rule is nearest the fastest timed (geometric mean), each cost's verdict printed to {@code out}. */
    static double bestCost(Map<Shape, List<Timed>> timings, Set<GemmTile> fitted, double from, double to, double step, PrintStream out) {
        out.printf(Locale.ROOT, "%-8s %7s %7s %9s %7s%n", "cost", "judged", "within", "geomean", "chosen");
        double bestCost = from;
        double bestMean = 0;
        for (double cost = from; cost <= to + 1e-9; cost += step) {
            Verdict v = judge(timings, fitted, cost, null);
            out.printf(Locale.ROOT, "%-8.3f %7d %7d %9.4f %7d%n", cost, v.judged, v.within, v.mean(), v.chosen);
            if (v.mean() > bestMean) {
                bestMean = v.mean();
                bestCost = cost;
            }
        }
        return bestCost;
    }

    private static final class Verdict {
        int judged;
        int within;
        int chosen;
        double logSum;

        double mean() {
            return judged == 0 ? 0 : Math.exp(logSum / judged);
        }
    }

    /** The rule with {@code fitted} at {@code cost} on every timed shape; each shape printed to {@code out} unless it is null. */
    private static Verdict judge(Map<Shape, List<Timed>> timings, Set<GemmTile> fitted, double cost, PrintStream out) {
        ToDoubleFunction<GemmTile> costs = t -> fitted.contains(t) ? cost : ScheduleCost.kBlockUs(t);
        Verdict v = new Verdict();
        for (Map.Entry<Shape, List<Timed>> e : timings.entrySet()) {
            Shape s = e.getKey();
            GemmTile swapped = GemmTile.swappedFor(s.m());  // the rule's one tile there (Gemm.plan)
            Set<GemmTile> tiles = new LinkedHashSet<>(List.of(swapped != null ? new GemmTile[] {swapped} : GemmTile.choices(s.m())));
            Arrays.stream(GemmTile.all(s.m())).filter(fitted::contains).forEach(tiles::add);
            StreamKPlan rule = StreamKPlan.choose(tiles.toArray(GemmTile[]::new), s.m(), s.n(), Gemm.kBlocks(s.k()), SMS,
                    StreamKPlan.pairsPay(s.k()), costs);
            Double us = PlanTimings.usOf(e.getValue(), rule);
            double fastest = PlanTimings.fastest(e.getValue());
            if (us != null) {
                v.judged++;
                v.logSum += Math.log(fastest / us);
                v.within += fastest / us >= 1 / 1.03 ? 1 : 0;
                v.chosen += fitted.contains(rule.tile()) ? 1 : 0;
            }
            if (out != null) {
                Double skinny = PlanTimings.best(e.getValue(), "SKINNY");
                Double lt = PlanTimings.best(e.getValue(), "CUBLASLT");
                out.printf(Locale.ROOT, "  %-18s rule %8s us (%s), fastest %.2f, skinny %s, cuBLASLt %s%n", s,
                        us == null ? "untimed" : String.format(Locale.ROOT, "%.2f", us), rule.describe(rule.units(s.m(), s.n())), fastest,
                        skinny == null ? "-" : String.format(Locale.ROOT, "%.2f", skinny), lt == null ? "-" : String.format(Locale.ROOT, "%.2f", lt));
            }
        }
        return v;
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.CclFigures.Figure;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SortedSet;

/**
 * The measurement {@link AllReduceAlgorithm#AUTO}'s rule should be derived from: at every all-reduce
 * size, which iris algorithm (ONE_SHOT, TWO_SHOT, RING, ATOMIC, COPY_ENGINE) was fastest, eagerly and from a
 * graph, by how much, and what the rule in this build picks there. It then states the rule the
 * data suggests as size ranges ("one_shot up to 256 KiB, two_shot from 1 MiB").
 *
 * <pre>{@code
 * String md = AutoChoice.section(figures, CclSettings.fromCommand(sweep.command()));
 * }</pre>
 */
public final class AutoChoice {
    /** Runners-up closer than this are called a tie in the table. */
    static final double TIE = 0.03;

    private AutoChoice() {}

    /** The fastest algorithm per size (eager or graph); sizes where no algorithm has a figure are left out. */
    public static List<Winner> winners(CclFigures figures, boolean graph) {
        List<Winner> out = new ArrayList<>();
        List<String> impls = new ArrayList<>();
        for (String a : CclFigures.ALL_REDUCE_ALGORITHMS) {
            impls.add(graph ? a + CclFigures.GRAPH : a);
        }
        for (long bytes : figures.sizes("all_reduce")) {
            String best = null;
            double bestUs = Double.MAX_VALUE;
            String second = null;
            double secondUs = Double.MAX_VALUE;
            for (String impl : impls) {
                Optional<Figure> f = figures.figure("all_reduce", impl, bytes);
                if (f.isEmpty()) {
                    continue;
                }
                double us = f.get().us();
                if (us < bestUs) {
                    second = best;
                    secondUs = bestUs;
                    best = impl;
                    bestUs = us;
                } else if (us < secondUs) {
                    second = impl;
                    secondUs = us;
                }
            }
            if (best != null) {
                out.add(new Winner(bytes, algorithm(best), bestUs, second == null ? null : algorithm(second),
                        second == null ? Double.NaN : secondUs));
            }
        }
        return out;
    }

    /**
     * @param algorithm the fastest: one_shot, two_shot, ring, atomic, copy_engine
     * @param secondUs  the runner-up's time, NaN when only one algorithm has a figure
     */
    public record Winner(long bytes, String algorithm, double us, String second, double secondUs) {
        /** Runner-up time ÷ winner's: 1.0 is a tie. */
        double margin() {
            return Double.isNaN(secondUs) ? Double.NaN : secondUs / us;
        }
    }

    /** "one_shot" from "iris_one_shot_graph". */
    static String algorithm(String impl) {
        String e = CclFigures.eagerOf(impl);
        return e.startsWith("iris_") ? e.substring(5) : e;
    }

    /** Consecutive sizes with the same winner, as "one_shot: 1 KiB – 256 KiB; two_shot: 1 MiB – 1 GiB". */
    public static String ranges(List<Winner> winners) {
        if (winners.isEmpty()) {
            return "no all-reduce algorithm was measured";
        }
        List<String> parts = new ArrayList<>();
        int start = 0;
        for (int i = 1; i <= winners.size(); i++) {
            if (i == winners.size() || !winners.get(i).algorithm().equals(winners.get(start).algorithm())) {
                Winner a = winners.get(start);
                Winner b = winners.get(i - 1);
                parts.add(a.algorithm() + ": " + Sizes.bytes(a.bytes()) + (a == b ? "" : " – " + Sizes.bytes(b.bytes())));
                start = i;
            }
        }
        return String.join("; ", parts);
    }

    /** What the AUTO rule of this build picks for an input of {@code bytes} on {@code world} ranks with these settings. */
    static String currentRule(long bytes, int world, long stagingBytes, long copyEngineBytes) {
        return Collectives.resolveAuto(bytes, world, stagingBytes, copyEngineBytes).name().toLowerCase(Locale.ROOT);
    }

    public static String section(CclFigures figures, CclSettings settings) {
        StringBuilder sb = new StringBuilder("## Automatic choice (all-reduce)\n\n");
        List<Winner> eager = winners(figures, false);
        List<Winner> graph = winners(figures, true);
        if (eager.isEmpty() && graph.isEmpty()) {
            return sb.append("No iris all-reduce algorithm was measured.\n\n").toString();
        }
        sb.append("Which iris algorithm was fastest at each size (slowest rank's median per call; \"≈\" marks a runner-up "
                + "within ").append(Math.round(TIE * 100)).append("%). `AllReduceAlgorithm.choose` should follow this table. "
                + "\"rule in this build\" is what `choose` returns here for ").append(figures.world())
                .append(" ranks and ").append(Sizes.bytes(settings.stagingBytes())).append(" of staging (ONE_SHOT takes up to ")
                .append(Sizes.bytes(Collectives.oneShotCapacityBytes(figures.world(), (settings.stagingBytes() + 255) / 256 * 256)))
                .append(" per rank); `iris_auto ÷ fastest` is the measured cost of that choice (1.00× = it chose the winner).\n\n");
        sb.append("- Fastest, launched eagerly: ").append(ranges(eager)).append('\n');
        sb.append("- Fastest, replayed from a graph: ").append(graph.isEmpty() ? "not measured" : ranges(graph)).append("\n\n");

        MarkdownTable t = new MarkdownTable("size", "fastest eager", "µs", "runner-up", "fastest in graph", "µs per call",
                "graph runner-up", "rule in this build", "iris_auto ÷ fastest (eager)", "iris_auto_graph ÷ fastest (graph)");
        SortedSet<Long> sizes = figures.sizes("all_reduce");
        for (long bytes : sizes) {
            Winner e = find(eager, bytes);
            Winner g = find(graph, bytes);
            if (e == null && g == null) {
                continue;
            }
            t.row(CclFigures.sizeLabel(bytes),
                    e == null ? "—" : e.algorithm(), e == null ? "—" : Sizes.number(e.us()), runnerUp(e),
                    g == null ? "—" : g.algorithm(), g == null ? "—" : Sizes.number(g.us()), runnerUp(g),
                    currentRule(bytes, figures.world(), settings.stagingBytes(), settings.copyEngineBytes()),
                    autoCost(figures, CclFigures.AUTO, e, bytes), autoCost(figures, CclFigures.AUTO + CclFigures.GRAPH, g, bytes));
        }
        return sb.append(t.render()).append('\n').toString();
    }

    private static Winner find(List<Winner> winners, long bytes) {
        return winners.stream().filter(w -> w.bytes() == bytes).findFirst().orElse(null);
    }

    private static String runnerUp(Winner w) {
        if (w == null || w.second() == null) {
            return "—";
        }
        double m = w.margin();
        return (m <= 1 + TIE ? "≈ " : "") + w.second() + " " + Sizes.number(w.secondUs()) + " µs ("
                + String.format(Locale.ROOT, "+%.0f%%", (m - 1) * 100) + ")";
    }

    private static String autoCost(CclFigures figures, String auto, Winner w, long bytes) {
        if (w == null) {
            return "—";
        }
        return figures.figure("all_reduce", auto, bytes).map(f -> Sizes.ratio(f.us() / w.us())).orElse("—");
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.CclFigures.Figure;
import dev.irisjvm.bench.results.SweepResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The README's status item for the collectives, from every committed collectives sweep: the ratios
 * are those of {@link CclTargets} (NCCL's time ÷ iris's, each the slowest rank's median, which at
 * equal bytes is also iris's bus bandwidth ÷ NCCL's), and each range spans all the runs that
 * measured it.
 *
 * <ul>
 *   <li>Small all-reduce: the sizes of targets A (eager) and B (graph replay), as one call from Java
 *       (what the targets judge), then back to back. Eager runs that time a different number of calls
 *       per repetition are kept apart, because a single call pays a stream launch that a burst of
 *       calls hides, so the two methods do not make one range.</li>
 *   <li>Bandwidth: every collective from {@value #BANDWIDTH_FROM_MIB} MiB up to the largest size, and
 *       where iris was slower than NCCL in some run.</li>
 * </ul>
 *
 * <pre>{@code
 * String item = new CclStatus(List.of(new CclStatus.Run(source, StoredResult.read(path, SweepResult.class))), targets).item("docs/benchmarks");
 * }</pre>
 */
final class CclStatus {
    /** Bandwidth ranges start here: below it the collectives are latency-bound, and targets A and B speak for them. */
    static final long BANDWIDTH_FROM_MIB = 1;

    /** One committed sweep. */
    record Run(RunSource source, SweepResult sweep) {
        CclFigures figures() {
            return new CclFigures(sweep.measurements(), sweep.worldSize());
        }

        CclSettings settings() {
            return CclSettings.fromCommand(sweep.command());
        }
    }

    private final List<Run> runs;
    private final BenchmarkTargets targets;

    CclStatus(List<Run> runs, BenchmarkTargets targets) {
        this.targets = targets;
        this.runs = runs.stream().sorted(Comparator.comparing((Run r) -> String.valueOf(r.sweep().date()))).toList();
    }

    String item(String linkBase) {
        StringBuilder sb = new StringBuilder("- device-initiated collectives (" + StatusSection.link(linkBase, CclDocument.MARKDOWN)
                + "), each against NCCL in the same run (ratio = NCCL's time ÷ iris's; at equal bytes, iris's bus bandwidth ÷ "
                + "NCCL's" + baselines() + "): ");
        sb.append(smallAllReduce()).append("; ").append(bandwidth());
        if (runs.stream().noneMatch(r -> r.figures().impls("all_reduce").contains("iris_copy_engine"))) {
            sb.append("; the copy-engine all-reduce has no point in these runs");
        }
        sb.append(" (").append(runs.stream().map(r -> r.source().cite(linkBase)).collect(Collectors.joining(", "))).append(");\n");
        return sb.toString();
    }

    /** Which of NCCL's ways the runs measured, where some run measured only plain NCCL. */
    private String baselines() {
        List<String> stronger = CclFigures.BASELINES.subList(1, CclFigures.BASELINES.size());
        boolean all = runs.stream().map(Run::figures).allMatch(f -> f.ops().stream()
                .anyMatch(op -> stronger.stream().anyMatch(b -> f.measured(op, b))));
        return all ? "; NCCL the fastest of the ways the run measured it" : "; NCCL on plain buffers only where a run predates "
                + "its window-registered and send/receive baselines, pending a two-GPU run";
    }

    /**
     * Targets A and B's sizes, over the runs: one call from Java (what the targets judge), then back
     * to back, eager runs grouped by calls per timed repetition, then graph replay.
     */
    private String smallAllReduce() {
        CclTargets.Spec eager = targets.collective("A");
        CclTargets.Spec graph = targets.collective("B");
        List<Double> oneEager = new ArrayList<>();
        List<Double> oneReplayed = new ArrayList<>();
        Map<Integer, List<Double>> eagerByCalls = new TreeMap<>(Comparator.reverseOrder());
        List<Double> replayed = new ArrayList<>();
        for (Run run : runs) {
            CclFigures figures = run.figures();
            for (long bytes : figures.sizes("all_reduce")) {
                if (eager.contains(bytes)) {
                    ratio(figures, "all_reduce", false, true, bytes).ifPresent(oneEager::add);
                    ratio(figures, "all_reduce", false, false, bytes)
                            .ifPresent(r -> eagerByCalls.computeIfAbsent(run.settings().eagerCalls(), c -> new ArrayList<>()).add(r));
                }
                if (graph.contains(bytes)) {
                    ratio(figures, "all_reduce", true, true, bytes).ifPresent(oneReplayed::add);
                    ratio(figures, "all_reduce", true, false, bytes).ifPresent(replayed::add);
                }
            }
        }
        List<String> eagerParts = new ArrayList<>();
        eagerByCalls.forEach((calls, ratios) -> RatioRange.of(ratios).ifPresent(r -> eagerParts.add(r.text() + " with " + calls
                + (calls == 1 ? " call" : " calls") + (eagerParts.isEmpty() ? " per timed repetition" : ""))));
        String oneCall = oneEager.isEmpty() && oneReplayed.isEmpty() ? "as one call from Java to its completion (what targets A and "
                + "B judge) not measured yet"
                : "as one call from Java to its completion " + RatioRange.of(oneEager).map(r -> r.text() + " launched eagerly")
                        .orElse("not measured eagerly") + ", " + RatioRange.of(oneReplayed).map(r -> r.text() + " replayed from a CUDA graph")
                        .orElse("not measured from a CUDA graph");
        return "all-reduce (`iris_auto`, " + eager.range() + ") " + oneCall + "; timed back to back, "
                + (eagerParts.isEmpty() ? "not measured eagerly" : "launched eagerly " + join(eagerParts)) + ", "
                + RatioRange.of(replayed).map(r -> r.text() + " replayed from a CUDA graph").orElse("not measured from a CUDA graph");
    }

    /** Per collective, the range from 1 MiB up; then the sizes where some run had iris behind NCCL. */
    private String bandwidth() {
        long from = BANDWIDTH_FROM_MIB * Sizes.MIB;
        long largest = 0;
        List<String> ranges = new ArrayList<>();
        List<String> behind = new ArrayList<>();
        for (String op : CclFigures.OP_ORDER) {
            List<Double> all = new ArrayList<>();
            // size -> {runs behind NCCL, runs measured}
            Map<Long, int[]> slower = new TreeMap<>();
            for (Run run : runs) {
                CclFigures figures = run.figures();
                for (long bytes : figures.sizes(op)) {
                    if (bytes + CclTargets.ROUNDING_SLACK < from) {
                        continue;
                    }
                    Optional<Double> ratio = ratio(figures, op, false, false, bytes);
                    if (ratio.isPresent()) {
                        all.add(ratio.get());
                        largest = Math.max(largest, bytes);
                        int[] counts = slower.computeIfAbsent(bytes, b -> new int[2]);
                        counts[0] += ratio.get() < 1 ? 1 : 0;
                        counts[1]++;
                    }
                }
            }
            RatioRange.of(all).ifPresent(r -> ranges.add(r.text() + " " + name(op)));
            List<String> sizes = new ArrayList<>();
            slower.forEach((bytes, c) -> {
                if (c[0] > 0) {
                    sizes.add(CclFigures.sizeLabel(bytes) + (c[0] < c[1] ? " (" + c[0] + " run of " + c[1] + ")" : ""));
                }
            });
            if (!sizes.isEmpty()) {
                behind.add(name(op) + " at " + join(sizes));
            }
        }
        if (ranges.isEmpty()) {
            return "no bandwidth figure from " + Sizes.bytes(from);
        }
        return "from " + Sizes.bytes(from) + " to " + CclFigures.sizeLabel(largest) + ", " + String.join(", ", ranges)
                + (behind.isEmpty() ? "" : "; slower than NCCL: " + String.join("; ", behind));
    }

    /**
     * NCCL's time ÷ iris's at one size in one timing mode, NCCL the fastest of its baselines there;
     * the iris all-reduce is the one a caller gets by default.
     */
    private static Optional<Double> ratio(CclFigures figures, String op, boolean graph, boolean oneCall, long bytes) {
        String iris = CclFigures.defaultIris(op) + CclFigures.suffix(graph, oneCall);
        Optional<Figure> i = figures.figure(op, iris, bytes);
        Optional<Figure> n = figures.baseline(op, graph, oneCall, bytes).map(CclFigures.Baseline::figure);
        return i.isPresent() && n.isPresent() ? Optional.of(n.get().us() / i.get().us()) : Optional.empty();
    }

    private static String name(String op) {
        return op.replace('_', '-');
    }

    /** "a", "a and b", "a, b and c". */
    static String join(List<String> items) {
        if (items.size() <= 1) {
            return String.join("", items);
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " and " + items.get(items.size() - 1);
    }
}

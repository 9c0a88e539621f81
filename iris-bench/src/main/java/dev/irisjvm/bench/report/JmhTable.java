package dev.irisjvm.bench.report;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.stream.Collectors;

/**
 * The JMH section: every entry of every rank's file, with JMH's own score, error and unit, and
 * the per-operation median in µs that the targets use. Entries with a {@code bytes} parameter
 * (RemoteTileBenchmark) also get GB/s = bytes ÷ median time.
 *
 * <pre>{@code
 * String md = JmhTable.section(JmhResults.read(Path.of("rma-jmh-rank0.json"), 0), List.of());
 * }</pre>
 */
public final class JmhTable {
    private JmhTable() {}

    /** @param problems files that could not be used, and why; listed so that a gap is never silent */
    public static String section(List<JmhResult> results, List<String> problems) {
        StringBuilder sb = new StringBuilder("## JMH\n\n");
        problems.forEach(p -> sb.append("- not used: ").append(p).append('\n'));
        if (!problems.isEmpty()) {
            sb.append('\n');
        }
        if (results.isEmpty()) {
            return sb.append("No JMH results were given: the JMH targets are not measured.\n\n").toString();
        }
        MarkdownTable t = new MarkdownTable("benchmark", "params", "rank", "mode", "iterations × batch", "score",
                "error", "unit", "median µs/op", "GB/s");
        List<JmhResult> sorted = results.stream()
                .sorted(Comparator.comparing(JmhResult::benchmark).thenComparing(JmhTable::paramsKey)
                        .thenComparingInt(JmhResult::rank))
                .collect(Collectors.toList());
        for (JmhResult r : sorted) {
            OptionalDouble us = r.microsPerOp(r.median());
            t.row(r.simpleName(), r.params().isEmpty() ? "—" : r.paramsText(), r.rank() < 0 ? "—" : r.rank(),
                    r.mode(), r.measurementIterations() + " × " + r.measurementBatchSize(), Sizes.number(r.score()),
                    Double.isNaN(r.scoreError()) ? "—" : "± " + Sizes.number(r.scoreError()), r.scoreUnit(),
                    us.isPresent() ? Sizes.number(us.getAsDouble()) : "—", gbps(r, us));
        }
        return sb.append(t.render()).append("\nScore, error and unit are as JMH wrote them; for `ss` "
                + "(SingleShotTime) JMH's score is the time of the whole batch, so the median per operation "
                + "divides by the batch size. Each rank wrote its own file; ranks ran the same benchmarks in "
                + "the same order, in step at every iteration.\n\n").toString();
    }

    /** Params compare as numbers where they are numbers, so 4096 sorts before 65536. */
    private static String paramsKey(JmhResult r) {
        return r.params().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey())
                .map(e -> e.getKey() + "=" + pad(e.getValue())).collect(Collectors.joining(","));
    }

    private static String pad(String v) {
        return v.matches("\\d{1,19}") ? String.format(Locale.ROOT, "%019d", Long.parseLong(v)) : v;
    }

    private static String gbps(JmhResult r, OptionalDouble us) {
        String bytes = r.params().get("bytes");
        if (bytes == null || us.isEmpty() || us.getAsDouble() <= 0) {
            return "—";
        }
        try {
            return Sizes.number(Long.parseLong(bytes.trim()) / (us.getAsDouble() * 1e3));
        } catch (NumberFormatException e) {
            return "—";
        }
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.CheckedPoint;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Points timed in rounds whose output was checked ({@link CheckedPoint}) as the MoE, training-step
 * and nodes reports group and show them; a missing point (null, an implementation the run did not
 * have) is "—".
 *
 * <pre>{@code
 * CheckedPoints.time(m);   // "812 [790–860]" (median [min–max] µs), "not run", or "—"
 * }</pre>
 */
final class CheckedPoints {
    private CheckedPoints() {}

    /**
     * {@code points} grouped by {@code key} in the order the run measured them, each group by
     * implementation; a repeated implementation keeps its first point.
     */
    static <P extends CheckedPoint, K> Map<K, Map<String, P>> byImpl(List<P> points, Function<P, K> key) {
        Map<K, Map<String, P>> groups = new LinkedHashMap<>();
        for (P p : points) {
            groups.computeIfAbsent(key.apply(p), k -> new LinkedHashMap<>()).putIfAbsent(p.impl(), p);
        }
        return groups;
    }

    /** Whether {@code m} is there and was timed. */
    static boolean timed(CheckedPoint m) {
        return m != null && m.timed();
    }

    /** The median with the range of all timed calls, in µs. */
    static String time(CheckedPoint m) {
        if (m == null) {
            return "—";
        }
        if (!m.timed()) {
            return "not run";
        }
        return Sizes.number(m.medianUs()) + " [" + Sizes.number(m.minUs()) + "–" + Sizes.number(m.maxUs()) + "]";
    }

    /** The median alone, in µs. */
    static String median(CheckedPoint m) {
        return timed(m) ? Sizes.number(m.medianUs()) : "—";
    }

    /** The output-check line of a point that failed its check or did not run, after {@code where}; null for any other. */
    static String failure(String where, CheckedPoint m) {
        if (m == null || !m.checkFailed() && m.timed()) {
            return null;
        }
        return "- " + where + m.impl() + ": " + (m.check().isEmpty() ? "not run" : m.check());
    }
}

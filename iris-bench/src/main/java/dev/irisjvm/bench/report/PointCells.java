package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.CheckedPoint;

/**
 * The cells of a point timed in rounds ({@link CheckedPoint}) as the MoE, training-step and nodes
 * reports show them; a missing point (null, an implementation the run did not have) is "—".
 *
 * <pre>{@code
 * PointCells.time(m);   // "812 [790–860]" (median [min–max] µs), "not run", or "—"
 * }</pre>
 */
final class PointCells {
    private PointCells() {}

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
}

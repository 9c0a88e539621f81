package dev.irisjvm.bench.report;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * The smallest and the largest of a set of ratios, written as the reports' target tables write a
 * ratio: three decimals, so that a range never reads as meeting a bound it misses (1.249 is not
 * 1.25) and each end can be found in the report it came from.
 *
 * <pre>{@code
 * RatioRange.of(List.of(1.302, 1.249, 1.341)).map(RatioRange::text);   // Optional["1.249–1.341×"]
 * RatioRange.of(List.of(1.311)).map(RatioRange::text);                 // Optional["1.311×"]
 * }</pre>
 */
record RatioRange(double min, double max) {

    /** The range of the finite values; empty when there is none (nothing measured is never a range). */
    static Optional<RatioRange> of(Collection<Double> values) {
        double[] v = values.stream().filter(d -> d != null && Double.isFinite(d)).mapToDouble(Double::doubleValue).toArray();
        if (v.length == 0) {
            return Optional.empty();
        }
        double min = v[0];
        double max = v[0];
        for (double d : v) {
            min = Math.min(min, d);
            max = Math.max(max, d);
        }
        return Optional.of(new RatioRange(min, max));
    }

    /** "1.249–1.341×", or one figure when both ends print alike. */
    String text() {
        String lo = ratio(min);
        String hi = ratio(max);
        return (lo.equals(hi) ? lo : lo + "–" + hi) + "×";
    }

    /** Three decimals, without the sign. */
    static String ratio(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }
}

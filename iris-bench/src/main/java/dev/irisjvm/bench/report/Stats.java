package dev.irisjvm.bench.report;

import java.util.Arrays;
import java.util.Collection;
import java.util.OptionalDouble;

/**
 * Order statistics over small samples (the pairs of ranks, the ranks of a JMH run).
 *
 * <pre>{@code
 * Stats.median(List.of(3.0, 1.0, 2.0));   // OptionalDouble[2.0]
 * Stats.median(List.of());               // OptionalDouble.empty
 * }</pre>
 */
public final class Stats {
    private Stats() {}

    /** The median; the mean of the two middle values for an even count; empty for no values. */
    public static OptionalDouble median(Collection<Double> values) {
        double[] v = sorted(values);
        if (v.length == 0) {
            return OptionalDouble.empty();
        }
        int mid = v.length / 2;
        return OptionalDouble.of(v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2);
    }

    public static OptionalDouble min(Collection<Double> values) {
        double[] v = sorted(values);
        return v.length == 0 ? OptionalDouble.empty() : OptionalDouble.of(v[0]);
    }

    public static OptionalDouble max(Collection<Double> values) {
        double[] v = sorted(values);
        return v.length == 0 ? OptionalDouble.empty() : OptionalDouble.of(v[v.length - 1]);
    }

    /** NaN values are left out: a missing figure must not drag a median. */
    private static double[] sorted(Collection<Double> values) {
        double[] v = values.stream().filter(d -> d != null && !d.isNaN()).mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        return v;
    }
}

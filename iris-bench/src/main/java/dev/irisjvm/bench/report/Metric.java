package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;

/**
 * Which figure of a {@link Measurement} counts for an operation, and its unit: bandwidth for
 * copies, time for the latency operations, operations per second for atomics.
 *
 * <pre>{@code
 * Metric m = Metric.of("ping_pong");      // LATENCY
 * double us = m.value(measurement);       // measurement.medianUs()
 * String unit = m.unit();                 // "µs"
 * }</pre>
 */
public enum Metric {
    BANDWIDTH("GB/s", true),
    LATENCY("µs", false),
    ATOMIC_RATE("G ops/s", true);

    private final String unit;
    private final boolean higherIsBetter;

    Metric(String unit, boolean higherIsBetter) {
        this.unit = unit;
        this.higherIsBetter = higherIsBetter;
    }

    /** The metric an operation of the sweep is reported in. */
    public static Metric of(String op) {
        if (op.equals("message_passing") || op.equals("ping_pong")) {
            return LATENCY;
        }
        if (op.startsWith("atomic_")) {
            return ATOMIC_RATE;
        }
        return BANDWIDTH;
    }

    public double value(Measurement m) {
        return switch (this) {
            case BANDWIDTH -> m.gbps();
            case LATENCY -> m.medianUs();
            case ATOMIC_RATE -> m.gops();
        };
    }

    public String unit() {
        return unit;
    }

    public boolean higherIsBetter() {
        return higherIsBetter;
    }
}

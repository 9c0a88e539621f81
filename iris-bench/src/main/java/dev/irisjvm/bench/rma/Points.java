package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.results.Measurement;

/**
 * Builds {@link Measurement}s from a point's outcome, with the units the results promise: GB/s as
 * bytes / median time (1e9 bytes per second), G ops/s for atomics, zeros where the run failed.
 *
 * <pre>{@code
 * Measurement m = Points.bandwidth("load", "iris", bytes, 0, 1, outcome);
 * }</pre>
 */
public final class Points {
    private Points() {}

    /** A bandwidth point: each repetition moved {@code bytes}. */
    public static Measurement bandwidth(String op, String impl, long bytes, int issuer, int peer, Lockstep.Outcome o) {
        TimingStats t = stats(o, 1);
        return t == null ? failed(op, impl, bytes, issuer, peer, o.check())
                : new Measurement(op, impl, bytes, issuer, peer, t.reps(), t.medianUs(), t.minUs(), t.maxUs(),
                        t.gbps(bytes), 0.0, o.check());
    }

    /** Atomics: each repetition did {@code ops} operations; bytes are 8 x ops as the results define. */
    public static Measurement atomics(String op, long ops, int issuer, int peer, Lockstep.Outcome o) {
        long bytes = 8 * ops;
        TimingStats t = stats(o, 1);
        return t == null ? failed(op, "iris", bytes, issuer, peer, o.check())
                : new Measurement(op, "iris", bytes, issuer, peer, t.reps(), t.medianUs(), t.minUs(), t.maxUs(),
                        0.0, t.gops(ops), o.check());
    }

    /**
     * A point whose repetitions each carried {@code perRep} messages or round trips: times are per
     * message; GB/s is given where {@code withBandwidth} (message passing), else 0 (ping-pong).
     */
    public static Measurement perMessage(String op, long bytes, int issuer, int peer, long perRep, boolean withBandwidth,
                                         Lockstep.Outcome o) {
        TimingStats t = stats(o, perRep);
        return t == null ? failed(op, "iris", bytes, issuer, peer, o.check())
                : new Measurement(op, "iris", bytes, issuer, peer, t.reps(), t.medianUs(), t.minUs(), t.maxUs(),
                        withBandwidth ? t.gbps(bytes) : 0.0, 0.0, o.check());
    }

    /** A point with no timing, only the reason. */
    public static Measurement failed(String op, String impl, long bytes, int issuer, int peer, String check) {
        return new Measurement(op, impl, bytes, issuer, peer, 0, 0.0, 0.0, 0.0, 0.0, 0.0, check);
    }

    private static TimingStats stats(Lockstep.Outcome o, long perRep) {
        return o.millis() == null || o.millis().length == 0 ? null : TimingStats.ofMillis(o.millis(), perRep);
    }
}

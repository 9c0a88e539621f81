package dev.irisjvm.bench.rma;

import java.util.Arrays;

/**
 * Median, minimum and maximum of a point's repetitions, in microseconds.
 *
 * <pre>{@code
 * TimingStats t = TimingStats.ofMillis(new float[] {0.012f, 0.010f, 0.011f}, 1);
 * t.medianUs();   // 11.0
 * TimingStats perMessage = TimingStats.ofMillis(repMillis, 1000);   // each rep carried 1000 messages
 * }</pre>
 *
 * @param reps     how many repetitions were timed
 * @param medianUs the median (the mean of the middle two for an even count)
 * @param minUs    the fastest repetition
 * @param maxUs    the slowest repetition
 */
public record TimingStats(int reps, double medianUs, double minUs, double maxUs) {

    /** Statistics of per-repetition times in milliseconds, each divided by {@code perRep} operations. */
    public static TimingStats ofMillis(float[] millis, long perRep) {
        if (millis == null || millis.length == 0) {
            throw new IllegalArgumentException("at least one repetition is needed");
        }
        if (perRep < 1) {
            throw new IllegalArgumentException("operations per repetition must be >= 1, got " + perRep);
        }
        double[] us = new double[millis.length];
        for (int i = 0; i < millis.length; i++) {
            us[i] = millis[i] * 1000.0 / perRep;
        }
        return ofMicros(us);
    }

    /** Statistics of times in microseconds. */
    public static TimingStats ofMicros(double[] micros) {
        if (micros == null || micros.length == 0) {
            throw new IllegalArgumentException("at least one repetition is needed");
        }
        double[] s = micros.clone();
        Arrays.sort(s);
        return new TimingStats(s.length, median(s), s[0], s[s.length - 1]);
    }

    /** The median of sorted values. */
    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }

    /** Bytes per second at the median, in GB/s (1e9 bytes per second). */
    public double gbps(long bytes) {
        return medianUs > 0 ? bytes / (medianUs * 1e3) : 0.0;
    }

    /** Operations per second at the median, in billions. */
    public double gops(long operations) {
        return medianUs > 0 ? operations / (medianUs * 1e3) : 0.0;
    }
}

package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class TimingStatsTest {
    @Test
    void medianOfOddAndEvenCounts() {
        TimingStats odd = TimingStats.ofMicros(new double[] {5, 1, 3});
        assertEquals(3, odd.medianUs());
        assertEquals(1, odd.minUs());
        assertEquals(5, odd.maxUs());
        assertEquals(3, odd.reps());
        TimingStats even = TimingStats.ofMicros(new double[] {4, 1, 3, 10});
        assertEquals(3.5, even.medianUs());
    }

    @Test
    void millisecondsPerRepetitionBecomeMicrosecondsPerOperation() {
        TimingStats t = TimingStats.ofMillis(new float[] {2.0f, 1.0f, 3.0f}, 1000);
        assertEquals(2.0, t.medianUs(), 1e-9);
        assertEquals(1.0, t.minUs(), 1e-9);
        assertEquals(3.0, t.maxUs(), 1e-9);
    }

    @Test
    void rates() {
        TimingStats t = TimingStats.ofMicros(new double[] {1000});
        assertEquals(1.0, t.gbps(1_000_000_000L / 1000), 1e-12);   // 1 MB in 1 ms = 1 GB/s
        assertEquals(0.5, t.gops(500_000), 1e-12);
        assertEquals(0.0, new TimingStats(0, 0, 0, 0).gbps(100));
    }

    @Test
    void inputIsNotModified() {
        double[] raw = {3, 1, 2};
        TimingStats.ofMicros(raw);
        assertEquals(3, raw[0]);
    }

    @Test
    void rejectsEmptyInput() {
        assertThrows(IllegalArgumentException.class, () -> TimingStats.ofMicros(new double[0]));
        assertThrows(IllegalArgumentException.class, () -> TimingStats.ofMillis(new float[] {1f}, 0));
    }
}

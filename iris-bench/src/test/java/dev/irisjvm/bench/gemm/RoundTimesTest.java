package dev.irisjvm.bench.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.bench.rma.TimingStats;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The median over every call of every round, not the median of the round medians; and each round's own. */
class RoundTimesTest {
    @Test
    void medianOverAllCallsOfAllRounds() {
        RoundTimes t = new RoundTimes();
        float[] first = {1.0f, 1.0f, 1.0f};
        t.add(first);
        t.add(new float[] {2.0f, 2.0f, 2.0f});
        t.add(new float[] {1.5f, 3.0f, 3.0f});
        first[0] = 99f;   // a caller's array reused afterwards changes nothing
        TimingStats all = t.all();
        assertEquals(9, all.reps());
        // Sorted: 1 1 1 1.5 2 2 2 3 3 ms: the fifth is 2 ms.
        assertEquals(2000.0, all.medianUs(), 1e-9);
        assertEquals(1000.0, all.minUs(), 1e-9);
        assertEquals(3000.0, all.maxUs(), 1e-9);
        assertEquals(List.of(1000.0, 2000.0, 3000.0), t.roundMediansUs());
        assertEquals(3, t.rounds());
    }

    @Test
    void aRoundWeighsAsManyCallsAsItHas() {
        RoundTimes t = new RoundTimes();
        t.add(new float[] {1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
        t.add(new float[] {5.0f, 5.0f});
        t.add(new float[] {6.0f, 6.0f});
        // Five calls at 1 ms and four slower ones: the median over the calls is 1 ms; the median of the round medians would be 5.
        assertEquals(1000.0, t.all().medianUs(), 1e-9);
        assertEquals(List.of(1000.0, 5000.0, 6000.0), t.roundMediansUs());
    }

    @Test
    void evenCountsAverageTheMiddleTwo() {
        RoundTimes t = new RoundTimes();
        t.add(new float[] {1.0f, 4.0f});
        t.add(new float[] {2.0f, 3.0f});
        assertEquals(2500.0, t.all().medianUs(), 1e-9);
        assertEquals(List.of(2500.0, 2500.0), t.roundMediansUs());
    }

    @Test
    void emptyRoundsAreRefused() {
        RoundTimes t = new RoundTimes();
        assertThrows(IllegalArgumentException.class, () -> t.add(new float[0]));
        assertThrows(IllegalArgumentException.class, () -> t.add(null));
        assertThrows(IllegalArgumentException.class, t::all, "no calls: no median");
    }
}

package dev.irisjvm.bench.gemm;

import dev.irisjvm.bench.rma.TimingStats;
import java.util.ArrayList;
import java.util.List;

/**
 * One implementation's timed calls on one shape, round by round: the figure that counts is the
 * median over every timed call of every round (a slow round weighs no more than its calls), and
 * each round's own median is kept to show drift between rounds.
 *
 * <pre>{@code
 * RoundTimes t = new RoundTimes();
 * t.add(timer.run(warmup, reps, r -> {}, body, true));   // once per round
 * t.all().medianUs();       // over all rounds' calls
 * t.roundMediansUs();       // [1377.1, 1376.4, ...]
 * }</pre>
 */
public final class RoundTimes {
    private final List<float[]> rounds = new ArrayList<>();

    /** One round's timed calls, in milliseconds each. */
    public void add(float[] millis) {
        if (millis == null || millis.length == 0) {
            throw new IllegalArgumentException("a round needs at least one timed call");
        }
        rounds.add(millis.clone());
    }

    public int rounds() {
        return rounds.size();
    }

    /** Median, fastest and slowest over every call of every round, in microseconds. */
    public TimingStats all() {
        int count = rounds.stream().mapToInt(r -> r.length).sum();
        float[] every = new float[count];
        int at = 0;
        for (float[] r : rounds) {
            System.arraycopy(r, 0, every, at, r.length);
            at += r.length;
        }
        return TimingStats.ofMillis(every, 1);
    }

    /** Each round's median in microseconds, in the order the rounds ran. */
    public List<Double> roundMediansUs() {
        return rounds.stream().map(r -> TimingStats.ofMillis(r, 1).medianUs()).toList();
    }
}

package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.gemm.RoundOrder;
import dev.irisjvm.bench.gemm.RoundTimes;
import dev.irisjvm.core.Iris;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Implementations that take turns, round after round, in {@link RoundOrder}'s order of each round,
 * each turn timed with {@link RepTimer} on every rank ({@link Lockstep#everyone}); per call the
 * slowest rank's time counts ({@link SlowestRank}). An implementation whose turn fails on any rank
 * sits out the rounds after, with the failure's text. Collective: every rank passes the same
 * implementations in the same order.
 *
 * <pre>{@code
 * TurnsInRounds.Outcome<Impl> o = TurnsInRounds.time(iris, lockstep, timer, impls, rounds, warmup, reps);
 * o.times().get(impl).all().medianUs();   // or o.failures().get(impl): why it was not timed
 * }</pre>
 */
public final class TurnsInRounds {
    /** One implementation's turn: the untimed work before each call, the timed call, and what leaves it clean after its turn. */
    public interface Turn {
        RepTimer.Rep before();

        RepTimer.Rep body();

        default Runnable after() {
            return () -> {};
        }
    }

    /** The times of the implementations that ran every round, and why the others stopped. */
    public record Outcome<T>(Map<T, RoundTimes> times, Map<T, String> failures) {}

    private TurnsInRounds() {}

    public static <T extends Turn> Outcome<T> time(Iris iris, Lockstep lockstep, RepTimer timer, List<T> impls, int rounds,
                                                  int warmup, int reps) {
        Map<T, RoundTimes> times = new LinkedHashMap<>();
        Map<T, String> failed = new LinkedHashMap<>();
        for (T i : impls) {
            times.put(i, new RoundTimes());
        }
        for (int round = 0; round < rounds; round++) {
            for (T i : RoundOrder.of(impls, round)) {
                if (failed.containsKey(i)) continue;
                Lockstep.Outcome o = lockstep.everyone(null, () -> {
                    try {
                        return timer.run(warmup, reps, i.before(), i.body(), true);
                    } finally {
                        i.after().run();
                    }
                }, null);
                if (o.millis() == null) {
                    failed.put(i, o.check());
                } else {
                    times.get(i).add(SlowestRank.of(iris, o.millis()));
                }
            }
        }
        failed.keySet().forEach(times::remove);
        return new Outcome<>(times, failed);
    }
}

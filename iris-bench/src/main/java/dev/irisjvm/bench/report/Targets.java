package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.TargetResult.Status;
import dev.irisjvm.bench.results.Measurement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The project's performance targets, computed from one run's data. A target whose data is
 * absent is "not measured": no figure is ever borrowed from another run or assumed.
 *
 * <p>Medians use only points whose data verified.
 *
 * <p>The bounds and the size of (a) are data ({@code targets.json}, {@link BenchmarkTargets.Rma}).
 *
 * <ul>
 *   <li>(a) SM-driven remote load and store at one size reach at least a fraction of the copy engine's peer
 *       bandwidth of the same run, in the same direction where the sweep records directions
 *       (medians over pairs of ranks); ratio = iris ÷ copy engine.</li>
 *   <li>(b) message-passing round trip (put + flag) at most a bound: ping_pong (time per round
 *       trip) at its smallest size; without ping_pong, message_passing (time per message), said
 *       so in the row; ratio = measured ÷ bound.</li>
 *   <li>(c) Java-side cost of one host-initiated tile operation (launch, no sync), median at most a bound: every launch benchmark of the JMH files, judged by the slowest benchmark on its
 *       slowest rank; ratio = measured ÷ bound.</li>
 *   <li>(d) {@code barrier()} across ranks, median at most a bound: BarrierBenchmark.barrierPipelined
 *       (back-to-back barriers, per barrier), slowest rank.</li>
 * </ul>
 *
 * <pre>{@code
 * BenchmarkTargets.Rma t = BenchmarkTargets.builtIn().rma();
 * List<TargetResult> rows = Targets.evaluate(new SweepIndex(sweep.measurements()), jmhResults, t);
 * String md = Targets.section(rows, t);
 * }</pre>
 */
public final class Targets {
    /** JMH classes that time one launch without waiting for the GPU. */
    static final Set<String> LAUNCH_BENCHMARKS = Set.of("LaunchBenchmark");
    static final String BARRIER_BENCHMARK = "BarrierBenchmark";
    static final String PIPELINED_BARRIER = "barrierPipelined";

    private Targets() {}

    public static List<TargetResult> evaluate(SweepIndex sweep, List<JmhResult> jmh, BenchmarkTargets.Rma targets) {
        List<TargetResult> out = new ArrayList<>();
        out.add(bandwidth(sweep, "load", targets));
        out.add(bandwidth(sweep, "store", targets));
        out.add(bandwidth(sweep, "load_bulk", targets));
        out.add(bandwidth(sweep, "store_bulk", targets));
        out.addAll(roundTrips(sweep, targets.roundTripMaxUs()));
        out.add(jmhTarget(jmh, "c", "Java-side cost of one host-initiated tile operation (launch, no sync), median",
                targets.launchMaxUs(), r -> LAUNCH_BENCHMARKS.contains(r.className()),
                "no LaunchBenchmark in the JMH files"));
        // barrier() is asynchronous: its cost is the device time of one barrier in the stream, which
        // back-to-back barriers measure; barrier + synchronize adds the host's wake-up and stays in
        // the JMH table for reference.
        out.add(jmhTarget(jmh, "d", "`barrier()` across ranks (100 back-to-back, then synchronize), median per barrier",
                targets.barrierMaxUs(), r -> BARRIER_BENCHMARK.equals(r.className()) && PIPELINED_BARRIER.equals(r.method()),
                "no BarrierBenchmark.barrierPipelined in the JMH files"));
        return out;
    }

    /** (a): iris load or store against the copy engine, both at 1 GiB. */
    static TargetResult bandwidth(SweepIndex sweep, String op, BenchmarkTargets.Rma targets) {
        long atBytes = targets.bandwidthBytes();
        double fraction = targets.copyEngineFraction();
        String id = "a (" + op + ")";
        String target = "SM-driven remote " + op + " at " + Sizes.bytes(atBytes);
        String bound = "≥ " + fraction + " × copy engine (same run)";
        Optional<Series> iris = sweep.find(op, "iris");
        Optional<Series> ce = Floors.copyEngineFor(sweep, op);
        if (iris.isEmpty() || ce.isEmpty()) {
            return TargetResult.notMeasured(id, target, bound,
                    iris.isEmpty() ? op + " [iris] is not in the sweep" : "no copy-engine op is in the sweep");
        }
        OptionalDouble mine = sweep.medianOverPairs(iris.get(), atBytes, Measurement::gbps);
        OptionalDouble base = sweep.medianOverPairs(ce.get(), atBytes, Measurement::gbps);
        if (mine.isEmpty() || base.isEmpty() || base.getAsDouble() <= 0) {
            return TargetResult.notMeasured(id, target, bound, noPointReason(sweep, iris.get(), ce.get(), atBytes));
        }
        double ratio = mine.getAsDouble() / base.getAsDouble();
        String measured = Sizes.number(mine.getAsDouble()) + " GB/s vs copy engine " + Sizes.number(base.getAsDouble()) + " GB/s";
        String source = op + " [iris] and " + ce.get().label() + " at " + Sizes.bytes(atBytes)
                + ", medians over " + sweep.verifiedPoints(iris.get(), atBytes).size() + " pair(s)";
        return new TargetResult(id, target, bound, measured, ratio, ratio >= fraction ? Status.PASS : Status.FAIL, source);
    }

    /** Says which 1 GiB point is missing and, for orientation only, the ratio at the largest common size. */
    private static String noPointReason(SweepIndex sweep, Series iris, Series ce, long atBytes) {
        SortedSet<Long> common = new TreeSet<>(sweep.sizes(iris));
        common.retainAll(sweep.sizes(ce));
        boolean present = sweep.sizes(iris).contains(atBytes) && sweep.sizes(ce).contains(atBytes);
        String why = present ? "the " + Sizes.bytes(atBytes) + " points failed their data check"
                : "no " + Sizes.bytes(atBytes) + " point in the sweep";
        if (!common.isEmpty()) {
            long largest = common.last();
            OptionalDouble a = sweep.medianOverPairs(iris, largest, Measurement::gbps);
            OptionalDouble b = sweep.medianOverPairs(ce, largest, Measurement::gbps);
            if (a.isPresent() && b.isPresent() && b.getAsDouble() > 0) {
                why += " (for orientation, not judged: " + Sizes.ratio(a.getAsDouble() / b.getAsDouble()) + " at "
                        + Sizes.bytes(largest) + ")";
            }
        }
        return why;
    }

    /**
     * (b): a message's round trip at the smallest size, for both protocols: put + release flag
     * (consumer acquires, then acks) and put with the flag inline in every 8-byte word.
     */
    static List<TargetResult> roundTrips(SweepIndex sweep, double limitUs) {
        return List.of(roundTrip(sweep, "b (put + release flag)", "message_passing", limitUs),
                roundTrip(sweep, "b (put, flags inline)", "message_passing_ll", limitUs));
    }

    static TargetResult roundTrip(SweepIndex sweep, String id, String op, double limitUs) {
        String target = "message-passing round trip (producer put + flag, consumer wait + ack), smallest message";
        String bound = "≤ " + Sizes.number(limitUs) + " µs";
        Optional<Series> s = sweep.find(op, "iris").or(() -> sweep.only(op));
        if (s.isEmpty() || sweep.sizes(s.get()).isEmpty()) {
            return TargetResult.notMeasured(id, target, bound, op + " is not in the sweep");
        }
        long smallest = sweep.sizes(s.get()).first();
        OptionalDouble us = sweep.medianOverPairs(s.get(), smallest, Measurement::medianUs);
        if (us.isEmpty()) {
            return TargetResult.notMeasured(id, target, bound, op + " has no verified point at " + Sizes.bytes(smallest));
        }
        double v = us.getAsDouble();
        return new TargetResult(id, target, bound, Sizes.number(v) + " µs", v / limitUs,
                v <= limitUs ? Status.PASS : Status.FAIL,
                s.get().label() + " at " + Sizes.bytes(smallest) + ", median over "
                        + sweep.verifiedPoints(s.get(), smallest).size() + " pair(s)");
    }

    /**
     * (c) and (d): per benchmark entry (name + params), the median per operation on each rank;
     * judged by the slowest entry on its slowest rank, because a rank that lags holds every
     * other rank up at the next barrier.
     */
    static TargetResult jmhTarget(List<JmhResult> jmh, String id, String target, double limitUs,
                                  Predicate<JmhResult> select, String whyMissing) {
        String bound = "≤ " + Sizes.number(limitUs) + " µs";
        Map<String, JmhResult> worstPerEntry = new LinkedHashMap<>();
        Map<String, Double> worstValue = new LinkedHashMap<>();
        for (JmhResult r : jmh) {
            if (!select.test(r)) {
                continue;
            }
            OptionalDouble us = r.microsPerOp(r.median());
            if (us.isEmpty()) {
                continue;
            }
            String key = r.benchmark() + " " + r.paramsText();
            if (!worstValue.containsKey(key) || us.getAsDouble() > worstValue.get(key)) {
                worstValue.put(key, us.getAsDouble());
                worstPerEntry.put(key, r);
            }
        }
        if (worstValue.isEmpty()) {
            return TargetResult.notMeasured(id, target, bound, whyMissing);
        }
        String worstKey = worstValue.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        double v = worstValue.get(worstKey);
        JmhResult r = worstPerEntry.get(worstKey);
        String source = r.simpleName() + (r.params().isEmpty() ? "" : " (" + r.paramsText() + ")")
                + (r.rank() >= 0 ? ", rank " + r.rank() : "") + "; slowest of " + worstValue.size() + " entr"
                + (worstValue.size() == 1 ? "y" : "ies") + " × " + ranksOf(jmh, select) + " rank(s)";
        return new TargetResult(id, target, bound, Sizes.number(v) + " µs", v / limitUs,
                v <= limitUs ? Status.PASS : Status.FAIL, source);
    }

    private static long ranksOf(List<JmhResult> jmh, Predicate<JmhResult> select) {
        return jmh.stream().filter(select).map(JmhResult::rank).distinct().count();
    }

    public static String section(List<TargetResult> rows, BenchmarkTargets.Rma targets) {
        MarkdownTable t = new MarkdownTable("target", "what", "bound", "measured", "ratio", "status", "from");
        rows.stream().sorted(Comparator.comparing(TargetResult::id)).forEach(r -> t.row(r.id(), r.target(), r.bound(),
                r.measured(), Sizes.ratio3(r.ratio()), r.status().text(), r.source()));
        return "## Targets\n\n" + t.render() + "\nRatio: (a) iris ÷ copy engine, passes at ≥ " + targets.copyEngineFraction()
                + "; (b)–(d) measured ÷ limit, passes at ≤ 1. JMH figures are per operation (single-shot "
                + "batches divided by their size), median over measurement iterations, slowest rank.\n\n";
    }
}

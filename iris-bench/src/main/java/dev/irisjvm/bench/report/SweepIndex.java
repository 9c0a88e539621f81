package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The measurements of a sweep grouped by series and size, with the reductions the report needs:
 * the median over pairs of ranks at one size, and one cell of the rank x rank matrix.
 *
 * <pre>{@code
 * SweepIndex index = new SweepIndex(StoredResult.read(path, SweepResult.class).measurements());
 * Series load = index.find("load", "iris").orElseThrow();
 * long largest = index.sizes(load).last();
 * OptionalDouble gbps = index.medianOverPairs(load, largest, Measurement::gbps);
 * }</pre>
 */
public final class SweepIndex {
    private final Map<Series, TreeMap<Long, List<Measurement>>> bySeries = new TreeMap<>();
    private final SortedSet<Integer> ranks = new TreeSet<>();

    public SweepIndex(List<Measurement> measurements) {
        for (Measurement m : measurements) {
            bySeries.computeIfAbsent(new Series(m.op(), m.impl()), s -> new TreeMap<>())
                    .computeIfAbsent(m.bytes(), b -> new ArrayList<>())
                    .add(m);
            ranks.add(m.issuer());
            if (m.peer() >= 0) {
                ranks.add(m.peer());
            }
        }
    }

    /** Every series, in report order. */
    public List<Series> series() {
        return List.copyOf(bySeries.keySet());
    }

    /** Every implementation of {@code op}, in report order. */
    public List<Series> seriesOf(String op) {
        return bySeries.keySet().stream().filter(s -> s.op().equals(op)).collect(Collectors.toList());
    }

    /** Every series whose op starts with {@code prefix} ({@code copy_engine} finds _pull and _push too). */
    public List<Series> seriesStartingWith(String prefix) {
        return bySeries.keySet().stream().filter(s -> s.op().startsWith(prefix)).collect(Collectors.toList());
    }

    public Optional<Series> find(String op, String impl) {
        Series s = new Series(op, impl);
        return bySeries.containsKey(s) ? Optional.of(s) : Optional.empty();
    }

    /** The one series of {@code op}, whatever its implementation, if there is exactly one. */
    public Optional<Series> only(String op) {
        List<Series> all = seriesOf(op);
        return all.size() == 1 ? Optional.of(all.get(0)) : Optional.empty();
    }

    /** Ranks that appear as issuer or peer anywhere in the sweep. */
    public SortedSet<Integer> ranks() {
        return Collections.unmodifiableSortedSet(ranks);
    }

    public SortedSet<Long> sizes(Series s) {
        TreeMap<Long, List<Measurement>> m = bySeries.get(s);
        return m == null ? new TreeSet<>() : new TreeSet<>(m.keySet());
    }

    public List<Measurement> points(Series s, long bytes) {
        TreeMap<Long, List<Measurement>> m = bySeries.get(s);
        if (m == null) {
            return List.of();
        }
        return m.getOrDefault(bytes, List.of());
    }

    /** Every measurement, in series then size order. */
    public List<Measurement> all() {
        List<Measurement> out = new ArrayList<>();
        bySeries.values().forEach(sizes -> sizes.values().forEach(out::addAll));
        return out;
    }

    /** The points of this size whose data verified (check "ok"; a missing check is taken as given). */
    public List<Measurement> verifiedPoints(Series s, long bytes) {
        return points(s, bytes).stream().filter(SweepIndex::verified).collect(Collectors.toList());
    }

    /** A point counts unless its check says something other than "ok": a failed point's zeros are no figure. */
    public static boolean verified(Measurement m) {
        return m.check() == null || "ok".equals(m.check());
    }

    /**
     * The median of {@code value} over every pair of ranks measured at this size, verified points
     * only. Pairs are not averaged: a median is not pulled by one slow link, and the matrix shows
     * the outliers.
     */
    public OptionalDouble medianOverPairs(Series s, long bytes, ToDoubleFunction<Measurement> value) {
        return Stats.median(values(s, bytes, value));
    }

    public OptionalDouble minOverPairs(Series s, long bytes, ToDoubleFunction<Measurement> value) {
        return Stats.min(values(s, bytes, value));
    }

    public OptionalDouble maxOverPairs(Series s, long bytes, ToDoubleFunction<Measurement> value) {
        return Stats.max(values(s, bytes, value));
    }

    /** Median over pairs of the series' own metric, for every size it has. */
    public TreeMap<Long, Double> curve(Series s) {
        return curve(s, s.metric()::value);
    }

    public TreeMap<Long, Double> curve(Series s, ToDoubleFunction<Measurement> value) {
        TreeMap<Long, Double> out = new TreeMap<>();
        for (long bytes : sizes(s)) {
            medianOverPairs(s, bytes, value).ifPresent(v -> out.put(bytes, v));
        }
        return out;
    }

    /** The measurements of one matrix cell (normally one; more if the sweep repeated a point). */
    public List<Measurement> cell(Series s, long bytes, int issuer, int peer) {
        return points(s, bytes).stream().filter(m -> m.issuer() == issuer && m.peer() == peer)
                .collect(Collectors.toList());
    }

    private List<Double> values(Series s, long bytes, ToDoubleFunction<Measurement> value) {
        return verifiedPoints(s, bytes).stream().map(m -> value.applyAsDouble(m)).collect(Collectors.toList());
    }
}

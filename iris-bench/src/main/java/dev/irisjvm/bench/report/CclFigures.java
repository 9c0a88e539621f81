package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * One figure per collective, implementation and size, from the per-rank measurements of a
 * collectives sweep. As nccl-tests does, a collective takes as long as its slowest rank: the time
 * is the largest of the ranks' medians; algorithm bandwidth = bytes ÷ time, bus bandwidth = that
 * times {@link BusBandwidth#factor}. A figure exists only when every point recorded there
 * verified its output: one failed rank makes the whole figure "failed", never a faster one.
 *
 * <pre>{@code
 * CclFigures f = new CclFigures(sweep.measurements(), sweep.worldSize());
 * f.figure("all_reduce", "nccl", 1 << 20).map(Figure::busGbps);   // Optional[...]
 * f.impls("all_reduce");   // [iris_one_shot, ..., iris_auto, nccl, nccl_window, iris_one_shot_graph, ..., nccl_window_graph]
 * f.oneCallImpls("all_reduce");   // [iris_auto_call, nccl_call, ..., iris_auto_graph_call, ...] where the sweep timed single calls
 * f.baseline("all_reduce", false, 4096).map(Baseline::impl);   // Optional[nccl_window] where it is the faster there
 * }</pre>
 */
public final class CclFigures {
    /** Suffix of the graph-replay variants. */
    public static final String GRAPH = "_graph";
    /**
     * Suffix of the variants timed as one call from Java, launch to completion (after {@link #GRAPH}
     * where a one-call graph is replayed): what a training step that waits for its collective sees.
     */
    public static final String CALL = "_call";
    public static final String NCCL = "nccl";
    /** NCCL on window-registered symmetric buffers (ncclMemAlloc + ncclCommWindowRegister, NCCL ≥ 2.27). */
    public static final String NCCL_WINDOW = "nccl_window";
    /**
     * NCCL moving the op's bytes as one group of ncclSend / ncclRecv (all-gather, broadcast): the
     * same bytes and output as its collective, by another way that can be faster for large sizes.
     */
    public static final String NCCL_P2P = "nccl_p2p";
    /** The ops that have {@link #NCCL_P2P}: the others reduce, or are send/receive already (all-to-all). */
    public static final List<String> P2P_OPS = List.of("all_gather", "broadcast");
    /** The baselines, plain first; where several have a figure, the fastest judges iris. */
    public static final List<String> BASELINES = List.of(NCCL, NCCL_WINDOW, NCCL_P2P);
    /** How a sweep records that it could not measure {@link #NCCL_WINDOW}: the check text of a 0-byte point. */
    public static final String WINDOW_UNAVAILABLE = "window-registered NCCL not available: ";
    /** The iris all-reduce algorithms, in the order tables show them. */
    public static final List<String> ALL_REDUCE_ALGORITHMS = List.of("iris_one_shot", "iris_two_shot", "iris_ring", "iris_atomic",
            "iris_copy_engine");
    public static final String AUTO = "iris_auto";
    static final List<String> IMPL_ORDER = List.of("iris_one_shot", "iris_two_shot", "iris_ring", "iris_atomic", "iris_copy_engine", "iris_auto",
            "iris", "nccl", "nccl_window", "nccl_p2p");
    static final List<String> OP_ORDER = List.of("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast");

    /**
     * @param us       the slowest rank's median time per call, µs
     * @param algGbps  bytes ÷ us, GB/s (1e9 bytes per second)
     * @param busGbps  algGbps × the bus factor of the op and world size
     * @param ranks    how many ranks' points it rests on
     */
    public record Figure(double us, double algGbps, double busGbps, int ranks) {}

    private final SweepIndex index;
    private final int world;

    public CclFigures(List<Measurement> measurements, int world) {
        this.index = new SweepIndex(measurements == null ? List.of() : measurements);
        this.world = world;
    }

    public int world() {
        return world;
    }

    public SweepIndex index() {
        return index;
    }

    /** The ops of the sweep, in report order. */
    public List<String> ops() {
        return index.series().stream().map(Series::op).distinct()
                .sorted(Comparator.comparingInt((String op) -> rankOf(OP_ORDER, op)).thenComparing(op -> op))
                .collect(Collectors.toList());
    }

    /**
     * The implementations of {@code op} timed back to back: eager ones first, then the graph replays,
     * each in {@link #IMPL_ORDER}. The one-call variants are {@link #oneCallImpls}.
     */
    public List<String> impls(String op) {
        return index.seriesOf(op).stream().map(Series::impl).filter(i -> !isOneCall(i)).distinct().sorted(IMPLS)
                .collect(Collectors.toList());
    }

    /** The implementations of {@code op} timed as one call from Java ({@link #CALL}), ordered as {@link #impls}. */
    public List<String> oneCallImpls(String op) {
        return index.seriesOf(op).stream().map(Series::impl).filter(CclFigures::isOneCall).distinct().sorted(IMPLS)
                .collect(Collectors.toList());
    }

    static final Comparator<String> IMPLS = Comparator
            .comparing(CclFigures::isGraph)
            .thenComparingInt(impl -> rankOf(IMPL_ORDER, eagerOf(impl)))
            .thenComparing(impl -> impl);

    /** The eager implementation a variant times: iris_ring_graph -> iris_ring, nccl_graph_call -> nccl. */
    public static String eagerOf(String impl) {
        String s = isOneCall(impl) ? impl.substring(0, impl.length() - CALL.length()) : impl;
        return s.endsWith(GRAPH) ? s.substring(0, s.length() - GRAPH.length()) : s;
    }

    /** Whether the variant replays a CUDA graph (back to back or as one call). */
    public static boolean isGraph(String impl) {
        return impl.endsWith(GRAPH) || impl.endsWith(GRAPH + CALL);
    }

    public static boolean isOneCall(String impl) {
        return impl.endsWith(CALL);
    }

    /** The suffix of a timing mode: "", "_graph", "_call" or "_graph_call". */
    public static String suffix(boolean graph, boolean oneCall) {
        return (graph ? GRAPH : "") + (oneCall ? CALL : "");
    }

    /** Whether the implementation is one of NCCL's ({@link #BASELINES}), eager or replayed. */
    public static boolean isNccl(String impl) {
        return BASELINES.contains(eagerOf(impl));
    }

    private static int rankOf(List<String> order, String s) {
        int i = order.indexOf(s);
        return i < 0 ? order.size() : i;
    }

    /** Every size any implementation of {@code op} has (a point of 0 bytes only says why nothing ran). */
    public SortedSet<Long> sizes(String op) {
        SortedSet<Long> sizes = new TreeSet<>();
        index.seriesOf(op).forEach(s -> sizes.addAll(index.sizes(s).tailSet(1L)));
        return sizes;
    }

    /**
     * A size as the tables show it: "4 KiB", or, for a size the sweep rounded down to whole elements
     * per rank (world sizes that do not divide a power of two), "1 MiB − 4 B".
     */
    public static String sizeLabel(long bytes) {
        long p = Long.highestOneBit(Math.max(1, bytes));
        if (p != bytes) {
            long up = p << 1;
            if (up - bytes < CclTargets.ROUNDING_SLACK) {
                return Sizes.bytes(up) + " − " + (up - bytes) + " B";
            }
        }
        return Sizes.bytes(bytes);
    }

    /** The figure, when every point there verified; empty when there is no point or one failed. */
    public Optional<Figure> figure(String op, String impl, long bytes) {
        List<Measurement> points = index.points(new Series(op, impl), bytes);
        if (bytes <= 0 || points.isEmpty() || points.stream().anyMatch(m -> !SweepIndex.verified(m) || m.medianUs() <= 0)) {
            return Optional.empty();
        }
        OptionalDouble slowest = Stats.max(points.stream().map(Measurement::medianUs).collect(Collectors.toList()));
        if (slowest.isEmpty()) {
            return Optional.empty();
        }
        double us = slowest.getAsDouble();
        double alg = bytes / (us * 1e3);
        double factor = BusBandwidth.factor(op, world);
        return Optional.of(new Figure(us, alg, Double.isNaN(factor) ? Double.NaN : alg * factor, points.size()));
    }

    /** Whether a point was recorded here but some rank's check failed (or it could not run). */
    public boolean failed(String op, String impl, long bytes) {
        List<Measurement> points = index.points(new Series(op, impl), bytes);
        return !points.isEmpty() && points.stream().anyMatch(m -> !SweepIndex.verified(m) || m.medianUs() <= 0);
    }

    /** One value of the figure for every size where the figure exists. */
    public TreeMap<Long, Double> curve(String op, String impl, ToDoubleFunction<Figure> value) {
        TreeMap<Long, Double> out = new TreeMap<>();
        for (long bytes : sizes(op)) {
            figure(op, impl, bytes).ifPresent(f -> out.put(bytes, value.applyAsDouble(f)));
        }
        return out;
    }

    /** The fastest of {@code impls} at this size (only those with a figure), or empty. */
    public Optional<String> fastest(String op, List<String> impls, long bytes) {
        String best = null;
        double bestUs = Double.MAX_VALUE;
        for (String impl : impls) {
            Optional<Figure> f = figure(op, impl, bytes);
            if (f.isPresent() && f.get().us() < bestUs) {
                bestUs = f.get().us();
                best = impl;
            }
        }
        return Optional.ofNullable(best);
    }

    /** The iris implementations of {@code op} among its eager (or graph) ones timed back to back. */
    public List<String> irisImpls(String op, boolean graph) {
        List<String> out = new ArrayList<>();
        for (String impl : impls(op)) {
            if (isGraph(impl) == graph && !isNccl(impl)) {
                out.add(impl);
            }
        }
        return out;
    }

    /** The iris implementation a caller of {@code op} gets by default: iris_auto for all-reduce, the op's one kernel otherwise. */
    public static String defaultIris(String op) {
        return op.equals("all_reduce") ? AUTO : "iris";
    }

    /** The baselines in one mode, e.g. [nccl_graph_call, nccl_window_graph_call, nccl_p2p_graph_call]. */
    public static List<String> baselineImpls(boolean graph, boolean oneCall) {
        return BASELINES.stream().map(b -> b + suffix(graph, oneCall)).toList();
    }

    /** NCCL at its fastest at one size and mode: the implementation and its figure. */
    public record Baseline(String impl, Figure figure) {}

    /** The fastest of the back-to-back baselines that have a figure here (plain NCCL where no other has one), or empty. */
    public Optional<Baseline> baseline(String op, boolean graph, long bytes) {
        return baseline(op, graph, false, bytes);
    }

    /** {@link #baseline(String, boolean, long)} in any timing mode. */
    public Optional<Baseline> baseline(String op, boolean graph, boolean oneCall, long bytes) {
        return fastest(op, baselineImpls(graph, oneCall), bytes).map(impl -> new Baseline(impl, figure(op, impl, bytes).orElseThrow()));
    }

    /** Whether the sweep measured NCCL on window-registered buffers for {@code op} at some size. */
    public boolean hasWindowBaseline(String op) {
        return measured(op, NCCL_WINDOW);
    }

    /** Whether {@code impl} has a point of {@code op} at some size (not only a 0-byte point that says why it did not run). */
    public boolean measured(String op, String impl) {
        return index.find(op, impl).map(s -> !index.sizes(s).tailSet(1L).isEmpty()).orElse(false);
    }

    /** Why the sweep could not measure NCCL on window-registered buffers, as it recorded it; empty when it did not say. */
    public Optional<String> windowUnavailable() {
        return index.all().stream().filter(m -> m.impl().equals(NCCL_WINDOW) && m.check() != null
                && m.check().startsWith(WINDOW_UNAVAILABLE)).map(m -> m.check().substring(WINDOW_UNAVAILABLE.length())).findFirst();
    }
}

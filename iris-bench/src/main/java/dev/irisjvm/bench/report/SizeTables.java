package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The "against message size" sections: bandwidth (table and {@value #BANDWIDTH_PNG}), latency
 * (table and {@value #LATENCY_PNG}) and atomics. Every figure is the median over the pairs of
 * ranks measured at that size; the per-pair figures are in the matrices.
 *
 * <pre>{@code
 * SizeTables t = new SizeTables(index, new Charts(outDir, ReportKind.RMA), BenchmarkTargets.builtIn().rma());
 * String md = t.bandwidthSection() + t.latencySection() + t.atomicsSection();
 * }</pre>
 */
public final class SizeTables {
    public static final String BANDWIDTH_PNG = "rma-bandwidth.png";
    public static final String LATENCY_PNG = "rma-latency.png";
    /** NCCL send/recv appears in the latency view up to this size when no latency op sets the range. */
    static final long SMALL_MESSAGE_BYTES = 64 * Sizes.KIB;

    private final SweepIndex index;
    private final Charts charts;
    private final BenchmarkTargets.Rma targets;

    SizeTables(SweepIndex index, Charts charts, BenchmarkTargets.Rma targets) {
        this.targets = targets;
        this.index = index;
        this.charts = charts;
    }

    public String bandwidthSection() {
        StringBuilder sb = new StringBuilder("## Bandwidth vs message size\n\n");
        List<Series> contenders = new ArrayList<>();
        for (String op : List.of("load", "store", "load_bulk", "store_bulk")) {
            index.find(op, "iris").ifPresent(contenders::add);
        }
        contenders.addAll(Floors.copyEngines(index));
        contenders.addAll(index.seriesOf("send_recv"));
        List<Series> references = Floors.localCopies(index);

        SizeChart chart = new SizeChart("Remote bandwidth vs message size (median over pairs of ranks)", "GB/s", true);
        contenders.forEach(s -> chart.series(s.label(), index.curve(s, Measurement::gbps)));
        references.forEach(s -> chart.referenceSeries(s.label() + " (reference)", index.curve(s, Measurement::gbps)));
        chart.horizontalLine("NVLink4 theoretical " + Sizes.number(Floors.NVLINK_GBPS) + " GB/s", Floors.NVLINK_GBPS);
        sb.append(chartLink(chart, BANDWIDTH_PNG, "Bandwidth vs message size"));

        // Message passing is a latency op but reports GB/s as well: it gets a column where it has any.
        List<Series> columns = index.series().stream().filter(s -> s.metric() == Metric.BANDWIDTH
                        || s.op().startsWith("message_passing") && index.all().stream().anyMatch(m -> m.op().equals(s.op()) && m.gbps() > 0))
                .collect(Collectors.toList());
        if (columns.isEmpty()) {
            return sb.append("No bandwidth operation is in the sweep.\n\n").toString();
        }
        List<String> header = new ArrayList<>(List.of("size"));
        columns.forEach(s -> header.add(s.label() + " GB/s"));
        Optional<Series> load = index.find("load", "iris");
        Optional<Series> store = index.find("store", "iris");
        Optional<Series> loadCe = Floors.copyEngineFor(index, "load");
        Optional<Series> storeCe = Floors.copyEngineFor(index, "store");
        boolean ratios = loadCe.isPresent() && (load.isPresent() || store.isPresent());
        if (ratios) {
            header.add("load ÷ " + loadCe.get().op());
            header.add("store ÷ " + storeCe.get().op());
        }
        MarkdownTable t = new MarkdownTable(header);
        for (long bytes : sizesOf(columns)) {
            List<Object> row = new ArrayList<>(List.of(Sizes.bytes(bytes)));
            columns.forEach(s -> row.add(cell(index.medianOverPairs(s, bytes, Measurement::gbps))));
            if (ratios) {
                row.add(ratio(load, loadCe.get(), bytes));
                row.add(ratio(store, storeCe.get(), bytes));
            }
            t.row(row);
        }
        return sb.append(t.render()).append("\nRatios are against the copy engine of the same run. GB/s are 1e9 "
                + "bytes per second; medians over pairs of ranks, verified points only.\n\n").toString();
    }

    public String latencySection() {
        StringBuilder sb = new StringBuilder("## Latency vs message size\n\n");
        List<Series> latency = new ArrayList<>();
        for (String op : List.of("message_passing", "message_passing_ll", "ping_pong", "ping_pong_relaxed")) {
            latency.addAll(index.seriesOf(op));
        }
        long limit = latency.stream().map(index::sizes).filter(s -> !s.isEmpty()).mapToLong(SortedSet::last).max()
                .orElse(SMALL_MESSAGE_BYTES);
        List<Series> nccl = index.seriesOf("send_recv");

        SizeChart chart = new SizeChart("Latency vs message size (median over pairs of ranks)", "µs", false);
        latency.forEach(s -> chart.series(s.label(), index.curve(s, Measurement::medianUs)));
        nccl.forEach(s -> chart.series(s.label() + " (NCCL, small sizes)", upTo(index.curve(s, Measurement::medianUs), limit)));
        chart.horizontalLine("target " + Sizes.number(targets.roundTripMaxUs()) + " µs round trip", targets.roundTripMaxUs());
        sb.append(chartLink(chart, LATENCY_PNG, "Latency vs message size"));

        if (latency.isEmpty() && nccl.isEmpty()) {
            return sb.append("No latency operation is in the sweep.\n\n").toString();
        }
        List<String> header = new ArrayList<>(List.of("size"));
        latency.forEach(s -> header.add(s.label() + " µs"));
        nccl.forEach(s -> header.add(s.label() + " µs"));
        MarkdownTable t = new MarkdownTable(header);
        SortedSet<Long> sizes = sizesOf(latency);
        nccl.forEach(s -> sizes.addAll(index.sizes(s).headSet(limit + 1)));
        for (long bytes : sizes) {
            List<Object> row = new ArrayList<>(List.of(Sizes.bytes(bytes)));
            latency.forEach(s -> row.add(cell(index.medianOverPairs(s, bytes, Measurement::medianUs))));
            nccl.forEach(s -> row.add(cell(index.medianOverPairs(s, bytes, Measurement::medianUs))));
            t.row(row);
        }
        return sb.append(t.render()).append("\nTimes are the median per repetition (CUDA events); NCCL send/recv "
                + "is shown up to " + Sizes.bytes(limit) + ".\n\n").toString();
    }

    public String atomicsSection() {
        StringBuilder sb = new StringBuilder("## Atomics\n\n");
        List<Series> atomics = index.series().stream().filter(s -> s.metric() == Metric.ATOMIC_RATE)
                .collect(Collectors.toList());
        if (atomics.isEmpty()) {
            return sb.append("No atomic operation is in the sweep.\n\n").toString();
        }
        List<String> header = new ArrayList<>(List.of("operations (bytes)"));
        atomics.forEach(s -> header.add(s.label() + " G ops/s"));
        MarkdownTable t = new MarkdownTable(header);
        for (long bytes : sizesOf(atomics)) {
            List<Object> row = new ArrayList<>(List.of((bytes / 8) + " (" + Sizes.bytes(bytes) + ")"));
            atomics.forEach(s -> row.add(cell(index.medianOverPairs(s, bytes, Measurement::gops))));
            t.row(row);
        }
        return sb.append(t.render()).append("\nOne 8-byte operation per element; billions of operations per second, "
                + "median over pairs of ranks.\n\n").toString();
    }

    private String chartLink(SizeChart chart, String file, String alt) {
        return charts.link(chart, file, alt, "No data for this chart.\n\n");
    }

    private SortedSet<Long> sizesOf(List<Series> series) {
        SortedSet<Long> sizes = new TreeSet<>();
        series.forEach(s -> sizes.addAll(index.sizes(s)));
        return sizes;
    }

    private String ratio(Optional<Series> mine, Series ce, long bytes) {
        if (mine.isEmpty()) {
            return "—";
        }
        OptionalDouble a = index.medianOverPairs(mine.get(), bytes, Measurement::gbps);
        OptionalDouble b = index.medianOverPairs(ce, bytes, Measurement::gbps);
        return a.isPresent() && b.isPresent() && b.getAsDouble() > 0 ? Sizes.ratio(a.getAsDouble() / b.getAsDouble()) : "—";
    }

    private static String cell(OptionalDouble v) {
        return v.isPresent() ? Sizes.number(v.getAsDouble()) : "—";
    }

    private static TreeMap<Long, Double> upTo(Map<Long, Double> curve, long limit) {
        TreeMap<Long, Double> out = new TreeMap<>();
        curve.forEach((k, v) -> {
            if (k <= limit) {
                out.put(k, v);
            }
        });
        return out;
    }
}

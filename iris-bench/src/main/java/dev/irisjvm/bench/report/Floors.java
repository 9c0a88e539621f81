package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * The bounds each operation is judged by, and the report section that states them: the copy
 * engine's peer bandwidth measured in the same run (what the link gives without SMs), and
 * NVLink4's theoretical line.
 *
 * <p>The sweep may record the copy engine as one op ({@code copy_engine}) or per direction
 * ({@code copy_engine_pull}: peer to issuer, {@code copy_engine_push}: issuer to peer). A remote
 * load is judged against the pull direction and a store against the push direction, where
 * recorded; local copies ({@code local_copy}, {@code local_copy_sm}, ...) are references only.
 *
 * <pre>{@code
 * Optional<Series> ce = Floors.copyEngineFor(index, "load");   // copy_engine_pull, else copy_engine
 * String md = Floors.section(index, BenchmarkTargets.builtIn().rma());
 * }</pre>
 */
public final class Floors {
    /** NVLink4 links per H100/H200 GPU. */
    public static final int NVLINK_LINKS = 18;
    /** Per link and direction, in GB/s of 1e9 bytes (the NV18 links of the H200 host). */
    public static final double NVLINK_LINK_GBPS = 26.56;
    /** 18 x 26.56 GB/s, per GPU and direction, rounded as it is usually quoted. */
    public static final double NVLINK_GBPS = 478;

    static final String COPY_ENGINE = "copy_engine";
    static final String LOCAL_COPY = "local_copy";

    private Floors() {}

    /** Every copy-engine series (one op, or one per direction), in report order. */
    public static List<Series> copyEngines(SweepIndex index) {
        return index.seriesStartingWith(COPY_ENGINE);
    }

    /** Every local-copy series (memcpy and SM variants), in report order. */
    public static List<Series> localCopies(SweepIndex index) {
        return index.seriesStartingWith(LOCAL_COPY);
    }

    /**
     * The copy-engine series that moves data the way {@code op} does: pull for load, push for
     * store; else the undivided copy_engine; else whichever copy-engine series there is.
     */
    public static Optional<Series> copyEngineFor(SweepIndex index, String op) {
        List<Series> all = copyEngines(index);
        String direction = op.contains("load") ? "_pull" : op.contains("store") ? "_push" : "";
        for (String wanted : List.of(COPY_ENGINE + direction, COPY_ENGINE)) {
            Optional<Series> s = all.stream().filter(x -> x.op().equals(wanted)).findFirst();
            if (s.isPresent()) {
                return s;
            }
        }
        return all.stream().findFirst();
    }

    public static String section(SweepIndex index, BenchmarkTargets.Rma targets) {
        StringBuilder sb = new StringBuilder("## Floors\n\n");
        sb.append("Remote operations are judged against the copy engine's peer bandwidth measured in the same run "
                + "(peer copies that use no SMs): the bandwidth the link gives without any kernel. A load is "
                + "compared with the copy engine pulling from the peer, a store with it pushing to the peer, where "
                + "the sweep records the two directions. NVLink4's theoretical line is ").append(NVLINK_LINKS)
                .append(" links × ").append(NVLINK_LINK_GBPS).append(" GB/s = ").append(Sizes.number(NVLINK_GBPS))
                .append(" GB/s per direction per GPU.\n\n");

        MarkdownTable floors = new MarkdownTable("floor", "size", "median GB/s", "min–max over pairs", "of NVLink4 478 GB/s");
        List<Series> ces = copyEngines(index);
        for (Series ce : ces) {
            long largest = index.sizes(ce).last();
            addFloor(floors, index, ce, largest, "copy engine peer bandwidth, " + ce.label(), true);
            if (largest != Sizes.GIB && index.sizes(ce).contains(Sizes.GIB)) {
                addFloor(floors, index, ce, Sizes.GIB, "copy engine peer bandwidth, " + ce.label(), true);
            }
        }
        if (ces.isEmpty()) {
            floors.row("copy engine peer bandwidth", "—", "not measured", "—", "—");
        }
        floors.row("NVLink4 theoretical, per direction", "—", Sizes.number(NVLINK_GBPS), "—", "100%");
        for (Series local : localCopies(index)) {
            addFloor(floors, index, local, index.sizes(local).last(), "local copy " + local.label()
                    + " (HBM reference, not a bound)", false);
        }
        sb.append(floors.render()).append('\n');

        MarkdownTable bounds = new MarkdownTable("series", "judged by", "bound");
        for (Series s : index.series()) {
            bounds.row(s.label(), judgedBy(s.op(), targets), boundOf(index, s.op(), targets));
        }
        if (!bounds.isEmpty()) {
            sb.append(bounds.render()).append('\n');
        }
        return sb.toString();
    }

    private static void addFloor(MarkdownTable t, SweepIndex index, Series s, long bytes, String name, boolean overLink) {
        OptionalDouble med = index.medianOverPairs(s, bytes, Measurement::gbps);
        OptionalDouble min = index.minOverPairs(s, bytes, Measurement::gbps);
        OptionalDouble max = index.maxOverPairs(s, bytes, Measurement::gbps);
        t.row(name, Sizes.bytes(bytes),
                med.isPresent() ? Sizes.number(med.getAsDouble()) : "not measured",
                min.isPresent() ? Sizes.number(min.getAsDouble()) + "–" + Sizes.number(max.getAsDouble()) : "—",
                med.isPresent() && overLink ? String.format(Locale.ROOT, "%.0f%%", 100 * med.getAsDouble() / NVLINK_GBPS) : "—");
    }

    private static String judgedBy(String op, BenchmarkTargets.Rma targets) {
        if (op.startsWith(COPY_ENGINE)) {
            return "NVLink4 theoretical (it is the floor of the others)";
        }
        if (op.startsWith(LOCAL_COPY)) {
            return "reference only (local HBM)";
        }
        if (op.startsWith("atomic_")) {
            return "reported only (no hardware floor measured)";
        }
        return switch (op) {
            case "load", "store", "load_bulk", "store_bulk" -> "copy engine in the same direction, same run (target ≥ "
                    + targets.copyEngineFraction() + "×); NVLink4 theoretical";
            case "all_load", "all_store" -> "NVLink4 per-GPU line (all peers share the GPU's 18 links)";
            case "ping_pong" -> "flag round trip with release/acquire (no data)";
            case "ping_pong_relaxed" -> "flag round trip with relaxed flags (no data): the link's latency floor";
            case "message_passing" -> "round-trip target: put + release flag, wait + ack";
            case "message_passing_ll" -> "round-trip target: put with the flag inline, wait + ack";
            case "send_recv", "all_reduce" -> "NCCL baseline; copy engine peer bandwidth";
            default -> "—";
        };
    }

    private static String boundOf(SweepIndex index, String op, BenchmarkTargets.Rma targets) {
        if (op.startsWith(COPY_ENGINE) || op.equals("all_load") || op.equals("all_store")) {
            return Sizes.number(NVLINK_GBPS) + " GB/s";
        }
        return switch (op) {
            case "load", "store", "load_bulk", "store_bulk" -> targets.copyEngineFraction() + " × " + ceText(index, op) + "; " + Sizes.number(NVLINK_GBPS) + " GB/s";
            case "send_recv", "all_reduce" -> ceText(index, op);
            case "message_passing", "message_passing_ll" -> "≤ " + Sizes.number(targets.roundTripMaxUs()) + " µs";
            default -> "—";
        };
    }

    /** "396 GB/s (copy_engine_pull [copy_engine], 1 GiB)" or "not measured". */
    private static String ceText(SweepIndex index, String op) {
        return copyEngineFor(index, op).map(s -> {
            long largest = index.sizes(s).last();
            OptionalDouble v = index.medianOverPairs(s, largest, Measurement::gbps);
            return v.isPresent() ? Sizes.number(v.getAsDouble()) + " GB/s (" + s.op() + ", " + Sizes.bytes(largest) + ")"
                    : "not measured";
        }).orElse("copy engine not measured");
    }
}

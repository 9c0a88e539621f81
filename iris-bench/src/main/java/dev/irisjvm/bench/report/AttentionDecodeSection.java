package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.BenchmarkTargets.DecodeFloor;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.AttentionBenchResult.Conventional;
import dev.irisjvm.bench.results.AttentionBenchResult.DecodePoint;
import dev.irisjvm.bench.results.AttentionBenchResult.HbmCopy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The flash-decode part of the attention report ({@link AttentionDocument}) and of its status item
 * ({@link AttentionStatus}), judged against the baseline the run measured. Runs that measured the
 * conventional unfused decode ({@code FlashDecode.conventional}: partial, merge, all-gather of one
 * entry per query head, combine) are judged against it, and show the all-partials path beside it.
 * Earlier runs measured only the all-partials path ({@code FlashDecode.baseline}, their
 * "baselineUs"): they render as they were written, judged against it and saying so. Each point is
 * also judged by its floor (issue 30): the K/V bytes per rank at the HBM copy bandwidth the run
 * measured, times a factor, plus a constant; runs without that copy leave it not judged.
 *
 * <pre>{@code
 * AttentionDecodeSection decode = new AttentionDecodeSection(run, targets.attention().decodeMinSpeedup(), targets.attention().decodeFloor());
 * decode.verdicts();              // two per point: over the baseline, and against the floor
 * decode.markdown(charts);        // "## Flash-decode" with its tables and chart
 * }</pre>
 */
final class AttentionDecodeSection {
    static final String CONVENTIONAL_STEPS = "partial + merge + NCCL all-gather + combine";
    static final String ALL_PARTIALS_STEPS = "partial + NCCL all-gather + combine";

    private final AttentionBenchResult run;
    private final List<DecodePoint> points;
    private final double target;
    /** The floor target, or null where the targets state none. */
    private final DecodeFloor floor;
    /** Whether the run measured the conventional path (earlier runs did not), or no decode at all. */
    private final boolean conventional;

    AttentionDecodeSection(AttentionBenchResult run, double target, DecodeFloor floor) {
        this.run = run;
        this.points = run.decode() == null ? List.of() : run.decode();
        this.target = target;
        this.floor = floor;
        // A run without decode points (--parts local) predates nothing: its header names today's baseline.
        this.conventional = points.isEmpty() || points.stream().anyMatch(p -> p.conventional() != null);
    }

    List<DecodePoint> points() {
        return points;
    }

    /** The point's baseline time over its fused time: the conventional path's, or in an earlier run the all-partials path's. */
    double speedup(DecodePoint p) {
        return conventional ? p.speedup() : p.allPartialsSpeedup();
    }

    /** Whether the point's output checks passed (an earlier run has only the all-partials one). */
    boolean checked(DecodePoint p) {
        return conventional ? p.checksPassed() : p.check().startsWith("ok");
    }

    /** What the fused kernel is measured against, as the status item says it. */
    String baselinePhrase() {
        return conventional ? "the conventional " + CONVENTIONAL_STEPS : ALL_PARTIALS_STEPS;
    }

    /** The header's words for the flash-decode comparison. */
    String headerPhrase() {
        return conventional
                ? "distributed flash-decode against the conventional unfused decode (partial, local merge, NCCL all-gather of one "
                        + "entry per query head, combine)"
                : "distributed flash-decode against " + ALL_PARTIALS_STEPS;
    }

    /** The header's baseline item: {@link #baselinePhrase()}, and for a run without the conventional path, that it is still to run. */
    String headerBaseline() {
        return conventional ? baselinePhrase()
                : baselinePhrase() + ", the baseline before issue 29; this run predates the conventional unfused decode, its "
                        + "stronger baseline, pending the next two-GPU run";
    }

    List<AttentionDocument.Verdict> verdicts() {
        List<AttentionDocument.Verdict> out = new ArrayList<>();
        for (DecodePoint p : points) {
            String config = "B " + p.batch() + ", KV " + AttentionDocument.tokens(p.totalLen()) + " ("
                    + AttentionDocument.tokens(p.lenPerRank()) + " per rank)";
            if (!conventional) {
                double s = p.allPartialsSpeedup();
                out.add(new AttentionDocument.Verdict("flash-decode ≥ " + target + "× over partial + all-gather + combine", config,
                        Sizes.number(p.fusedUs()) + " vs " + Sizes.number(p.allPartialsUs()) + " µs = " + Sizes.ratio3(s),
                        status(p, s)));
                continue;
            }
            String name = "flash-decode ≥ " + target + "× over the conventional path";
            if (p.conventional() == null) {
                out.add(new AttentionDocument.Verdict(name, config, "conventional path not measured", AttentionDocument.NOT_JUDGED));
                continue;
            }
            double s = p.speedup();
            out.add(new AttentionDocument.Verdict(name, config, Sizes.number(p.fusedUs()) + " vs " + Sizes.number(p.conventional().us())
                    + " µs = " + Sizes.ratio3(s), status(p, s)));
        }
        out.addAll(floorVerdicts());
        return out;
    }

    /** One verdict per point against the floor target; none where the targets state no floor. */
    List<AttentionDocument.Verdict> floorVerdicts() {
        return floor == null ? List.of() : points.stream().map(this::floorVerdict).toList();
    }

    /** The floor target, or null where the targets state none. */
    DecodeFloor floor() {
        return floor;
    }

    /** µs the point's K/V bytes per rank take at the run's HBM copy bandwidth; NaN without it. */
    double floorUs(DecodePoint p) {
        HbmCopy copy = run.hbmCopy();
        return copy == null || !(copy.us() > 0) ? Double.NaN : p.kvBytesPerRank() / (copy.gbps() * 1e3);
    }

    private AttentionDocument.Verdict floorVerdict(DecodePoint p) {
        String name = "flash-decode ≤ " + Sizes.number(floor.factor()) + " × K/V bytes ÷ HBM copy bandwidth + " + Sizes.number(floor.addUs())
                + " µs";
        String config = "B " + p.batch() + ", KV " + AttentionDocument.tokens(p.totalLen()) + " (" + Sizes.bytes(p.kvBytesPerRank())
                + " per rank)";
        double floorUs = floorUs(p);
        if (Double.isNaN(floorUs)) {
            return new AttentionDocument.Verdict(name, config, "no HBM copy in this run (it predates it)", AttentionDocument.NOT_JUDGED);
        }
        double bound = floor.boundUs(floorUs);
        String measured = Sizes.number(p.fusedUs()) + " vs " + Sizes.number(bound) + " µs (floor " + Sizes.number(floorUs) + ")";
        if (!checked(p)) {
            return new AttentionDocument.Verdict(name, config, measured, AttentionDocument.FAIL + " (output check)");
        }
        return new AttentionDocument.Verdict(name, config, measured, p.fusedUs() <= bound ? AttentionDocument.PASS : AttentionDocument.FAIL);
    }

    private String status(DecodePoint p, double speedup) {
        if (!checked(p)) {
            return AttentionDocument.FAIL + " (output check)";
        }
        return speedup >= target ? AttentionDocument.PASS : AttentionDocument.FAIL;
    }

    String markdown(Charts charts) {
        if (points.isEmpty()) {
            return "## Flash-decode\n\nNot run.\n\n";
        }
        return conventional ? conventionalSection(charts) : allPartialsSection(charts);
    }

    /** The method's line on flash-decode. */
    String methodLine() {
        return "- Flash-decode's fused call is its one kernel: odd and even calls use separate partials and counters, so no "
                + "barrier separates calls."
                + (conventional ? " The conventional path's check bounds its difference from the fused output (they combine in "
                        + "different orders and round apart); the all-partials path's output must equal the fused one bit for bit." : "")
                + "\n";
    }

    private String conventionalSection(Charts charts) {
        MarkdownTable t = new MarkdownTable("batch", "KV tokens (per rank)", "chunks × len", "fused µs", "conventional µs", "speedup",
                "partial µs", "merge µs", "all-gather µs", "combine µs", "check");
        MarkdownTable all = new MarkdownTable("batch", "KV tokens (per rank)", "all-partials µs", "speedup", "all-gather µs",
                "combine µs", "check");
        for (DecodePoint p : points) {
            String tokens = AttentionDocument.tokens(p.totalLen()) + " (" + AttentionDocument.tokens(p.lenPerRank()) + ")";
            Conventional c = p.conventional();
            t.row(p.batch(), tokens, p.chunks() + " × " + p.chunkLen(), Sizes.number(p.fusedUs()),
                    c == null ? "not measured" : Sizes.number(c.us()), Sizes.ratio3(p.speedup()), Sizes.number(p.partialUs()),
                    c == null ? null : Sizes.number(c.mergeUs()), c == null || !(c.gatherUs() > 0) ? null : Sizes.number(c.gatherUs()),
                    c == null ? null : Sizes.number(c.combineUs()), c == null ? null : c.check());
            all.row(p.batch(), tokens, Sizes.number(p.allPartialsUs()), Sizes.ratio3(p.allPartialsSpeedup()),
                    p.gatherUs() > 0 ? Sizes.number(p.gatherUs()) : null, Sizes.number(p.combineUs()), p.check());
        }
        Map<String, double[][]> lines = speedupByBatch(points.stream().filter(p -> p.conventional() != null).toList(),
                DecodePoint::speedup);
        DecodePoint first = points.get(0);
        return "## Flash-decode\n\n`FlashDecode.forward` over " + run.world() + " ranks (one kernel: partials, their exchange and the "
                + "combine) against the conventional unfused decode, `FlashDecode.conventional`: the `partial` kernel, the `merge` kernel "
                + "(each rank's chunks into one output and log-sum-exp per query head), NCCL all-gather of those entries and the "
                + "`combine` kernel over one entry per rank: " + first.qHeads() + " query heads, " + first.kvHeads() + " K/V heads, head size "
                + first.headDim() + ", " + first.dtype() + ", one new token per sequence, the KV cache of each sequence split evenly over "
                + "the ranks.\n\n" + t.render() + "\n" + floorTable()
                + "The all-partials path, `FlashDecode.baseline`, all-gathers every chunk's partial instead (chunks times the bytes) "
                + "and combines them all, as the fused kernel does; speedup is its time ÷ the fused time.\n\n" + all.render() + "\n"
                + charts.link(AttentionDocument.DECODE_PNG, "flash-decode speedup over the conventional path",
                () -> AttentionCharts.lines("Flash-decode: fused ÷ (" + CONVENTIONAL_STEPS + ")", "KV tokens per sequence (all ranks)",
                        "speedup", lines, target, "target " + target + "×", charts.file(AttentionDocument.DECODE_PNG)));
    }

    /**
     * The fused kernel against the time its K/V reads take at the run's HBM copy bandwidth, or why
     * there is no such table.
     */
    private String floorTable() {
        HbmCopy copy = run.hbmCopy();
        if (copy == null) {
            return "No HBM copy in this run (it predates the floor the fused kernel is judged by).\n\n";
        }
        MarkdownTable t = new MarkdownTable("batch", "KV tokens (per rank)", "K/V bytes per rank", "floor µs", "fused µs",
                "fused ÷ floor", "read GB/s");
        for (DecodePoint p : points) {
            double floorUs = floorUs(p);
            t.row(p.batch(), AttentionDocument.tokens(p.totalLen()) + " (" + AttentionDocument.tokens(p.lenPerRank()) + ")",
                    Sizes.bytes(p.kvBytesPerRank()), Sizes.number(floorUs), Sizes.number(p.fusedUs()), Sizes.ratio3(p.fusedUs() / floorUs),
                    Sizes.number(p.kvBytesPerRank() / (p.fusedUs() * 1e3)));
        }
        return "Against the floor: a device-to-device copy of " + Sizes.bytes(copy.bytes()) + " took " + Sizes.number(copy.us())
                + " µs in this run (the slowest rank's median), " + Sizes.number(copy.gbps()) + " GB/s through HBM, reads and writes "
                + "counted; a point's floor is its K/V bytes per rank at that rate, and \"read GB/s\" the rate the fused kernel read "
                + "them at.\n\n" + t.render() + "\n";
    }

    /** An earlier run's section, as it was written: the all-partials path was its baseline. */
    private String allPartialsSection(Charts charts) {
        MarkdownTable t = new MarkdownTable("batch", "KV tokens (per rank)", "chunks × len", "fused µs", "baseline µs", "speedup",
                "partial µs", "all-gather µs", "combine µs", "check");
        for (DecodePoint p : points) {
            t.row(p.batch(), AttentionDocument.tokens(p.totalLen()) + " (" + AttentionDocument.tokens(p.lenPerRank()) + ")",
                    p.chunks() + " × " + p.chunkLen(), Sizes.number(p.fusedUs()), Sizes.number(p.allPartialsUs()),
                    Sizes.ratio3(p.allPartialsSpeedup()), Sizes.number(p.partialUs()),
                    p.gatherUs() > 0 ? Sizes.number(p.gatherUs()) : null, Sizes.number(p.combineUs()), p.check());
        }
        Map<String, double[][]> lines = speedupByBatch(points, DecodePoint::allPartialsSpeedup);
        DecodePoint first = points.get(0);
        return "## Flash-decode\n\n`FlashDecode.forward` over " + run.world() + " ranks (one kernel: partials, "
                + "their exchange and the combine) against the baseline `partial` kernel + NCCL all-gather of the partials + `combine` kernel: "
                + first.qHeads() + " query heads, " + first.kvHeads() + " K/V heads, head size " + first.headDim() + ", " + first.dtype()
                + ", one new token per sequence, the KV cache of each sequence split evenly over the ranks.\n\n" + t.render() + "\n"
                + charts.link(AttentionDocument.DECODE_PNG, "flash-decode speedup over the baseline",
                () -> AttentionCharts.lines("Flash-decode: fused ÷ (partial + NCCL all-gather + combine)", "KV tokens per sequence (all ranks)",
                        "speedup", lines, target, "target " + target + "×", charts.file(AttentionDocument.DECODE_PNG)));
    }

    /** The chart's lines: per batch, smallest first, {@code speedup} over the KV tokens per sequence. */
    private static Map<String, double[][]> speedupByBatch(List<DecodePoint> points, ToDoubleFunction<DecodePoint> speedup) {
        Map<String, double[][]> lines = new LinkedHashMap<>();
        new TreeMap<>(points.stream().collect(Collectors.groupingBy(DecodePoint::batch))).forEach((b, list) -> lines.put("batch " + b,
                new double[][] {list.stream().mapToDouble(DecodePoint::totalLen).toArray(), list.stream().mapToDouble(speedup).toArray()}));
        return lines;
    }
}

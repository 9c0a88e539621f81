package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.BenchmarkTargets.DecodeFloor;
import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.AttentionBenchResult.DecodePoint;
import dev.irisjvm.bench.results.AttentionBenchResult.LocalPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.RingPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.SdpaPoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The README's status item for attention, from one attention run, with the ratios of {@code
 * attention.md}'s targets: the local kernel's TFLOP/s ÷ the fastest SDPA backend's (each backend at the faster of its GQA forms),
 * ring attention's time ÷ the no-communication reference and ÷ all-gather + local, and flash-decode's
 * baseline time ÷ fused time (the conventional path's, or in earlier runs the all-partials path's:
 * {@link AttentionDecodeSection}).
 *
 * <pre>{@code
 * String item = new AttentionStatus(source, StoredResult.read(path, AttentionBenchResult.class), targets).item("docs/benchmarks");
 * }</pre>
 */
final class AttentionStatus {
    private final RunSource source;
    private final AttentionBenchResult run;
    private final AttentionDocument document;
    private final AttentionDecodeSection decode;
    private final double decodeTarget;

    AttentionStatus(RunSource source, AttentionBenchResult run, BenchmarkTargets targets) {
        this.source = source;
        this.run = run;
        this.document = new AttentionDocument(run, Document.Context.of(targets));
        this.decodeTarget = targets.attention().decodeMinSpeedup();
        this.decode = new AttentionDecodeSection(run, decodeTarget, targets.attention().decodeFloor());
    }

    String item(String linkBase) {
        List<String> parts = new ArrayList<>();
        if (run.local() != null && !run.local().isEmpty()) {
            parts.add(local());
        }
        if (run.ring() != null && !run.ring().isEmpty()) {
            parts.add(ring());
        }
        String heading = parts.isEmpty() && !decode.points().isEmpty() ? "flash-decode" : "attention";   // a decode-only run
        if (!decode.points().isEmpty()) {
            parts.add(decode());
        }
        return "- " + heading + " ("
                + StatusSection.link(linkBase, AttentionDocument.MARKDOWN) + "): "
                + (parts.isEmpty() ? "nothing measured" : String.join("; ", parts)) + " (" + source.cite(linkBase) + ");\n";
    }

    /** Iris TFLOP/s ÷ the fastest SDPA backend's, over the shapes both measured, and which backends those were. */
    private String local() {
        List<Double> ratios = new ArrayList<>();
        Set<String> backends = new TreeSet<>();
        for (LocalPoint p : run.local()) {
            SdpaPoint ref = document.fastestSdpa(p.seq(), p.causal());
            if (ref != null && ref.tflops() != null && ref.tflops() > 0) {
                ratios.add(p.tflops() / ref.tflops());
                backends.add(ref.backend());
            }
        }
        String seqs = lengths(run.local().stream().map(LocalPoint::seq));
        String heads = run.local().stream().map(LocalPoint::headDim).distinct().sorted().map(String::valueOf)
                .collect(Collectors.collectingAndThen(Collectors.toList(), CclStatus::join));
        return "a local kernel, head size " + heads + ", at " + RatioRange.of(ratios).map(r -> r.text()
                + " the fastest PyTorch SDPA backend's TFLOP/s (" + String.join(", ", backends) + ")").orElse("no SDPA figure")
                + " (S = " + seqs + ", causal and not)";
    }

    private String ring() {
        List<Double> vsNoComm = new ArrayList<>();
        List<Double> vsAllGather = new ArrayList<>();
        double ringShards = 0;
        double allGatherShards = 0;
        for (RingPoint p : run.ring()) {
            vsNoComm.add(p.ringUs() / p.noCommUs());
            if (p.allGatherUs() > 0) {
                vsAllGather.add(p.ringUs() / p.allGatherUs());
            }
            double shard = AttentionDocument.shardKvBytes(p);
            ringShards = Math.max(ringShards, p.ringKvBytes() / shard);
            allGatherShards = Math.max(allGatherShards, p.allGatherKvBytes() / shard);
        }
        String seqs = lengths(run.ring().stream().map(RingPoint::totalSeq));
        return "ring attention over " + run.world() + " ranks taking " + RatioRange.of(vsNoComm).map(RatioRange::text).orElse("—")
                + " the time of the same work without communication"
                + RatioRange.of(vsAllGather).map(r -> " and " + r.text() + " that of NCCL all-gather of K/V + the local kernel").orElse("")
                + ", with at most " + Sizes.number(ringShards) + " shards of K/V per rank (all-gather: " + Sizes.number(allGatherShards)
                + "; S = " + seqs + ", causal and not)";
    }

    /** Speedup per batch, and how far along the KV length each batch meets the target. */
    private String decode() {
        Map<Integer, List<DecodePoint>> byBatch = new TreeMap<>(decode.points().stream().collect(Collectors.groupingBy(DecodePoint::batch)));
        List<String> ranges = new ArrayList<>();
        List<String> reach = new ArrayList<>();
        byBatch.forEach((batch, points) -> {
            RatioRange.of(points.stream().map(decode::speedup).toList())
                    .ifPresent(r -> ranges.add(r.text() + " at batch " + batch));
            // Speedup falls as the KV length grows (the partials' exchange is a smaller share), so the
            // claim is the longest prefix of lengths that all meet the target.
            long upTo = -1;
            for (DecodePoint p : points.stream().sorted(Comparator.comparingLong(DecodePoint::lenPerRank)).toList()) {
                if (!(decode.speedup(p) >= decodeTarget) || !decode.checked(p)) {
                    break;
                }
                upTo = p.lenPerRank();
            }
            reach.add(upTo < 0 ? "not at batch " + batch : "at batch " + batch + " up to " + AttentionDocument.tokens(upTo)
                    + " tokens per rank");
        });
        String lengths = lengths(decode.points().stream().map(DecodePoint::lenPerRank));
        // On one rank nothing is exchanged: the speedup target, set for the exchange, is not judged there.
        String speedupTarget = run.world() == 1 ? "" : ", the " + Sizes.ratio(decodeTarget) + " target met " + CclStatus.join(reach);
        return (run.world() == 1 ? "on one rank " : "distributed flash-decode ") + (ranges.isEmpty() ? "not measured" : CclStatus.join(ranges))
                + " over " + decode.baselinePhrase() + " (" + lengths + " tokens per rank)" + speedupTarget + floor();
    }

    /** How many points are within the floor target and fused ÷ floor over them; nothing where the run has no HBM copy. */
    private String floor() {
        List<AttentionDocument.Verdict> verdicts = decode.floorVerdicts();
        long judged = verdicts.stream().filter(v -> !v.status().equals(AttentionDocument.NOT_JUDGED)).count();
        if (judged == 0) {
            return "";
        }
        long within = verdicts.stream().filter(v -> v.status().equals(AttentionDocument.PASS)).count();
        List<Double> overFloor = decode.points().stream().map(p -> p.fusedUs() / decode.floorUs(p)).toList();
        DecodeFloor f = decode.floor();
        return "; within its floor target (fused time ≤ " + Sizes.number(f.factor()) + " × the K/V bytes per rank at the HBM copy "
                + "bandwidth of the same run, " + Sizes.number(run.hbmCopy().gbps()) + " GB/s, + " + Sizes.number(f.addUs())
                + " µs) at " + within + " of " + judged + " points, fused ÷ floor " + RatioRange.of(overFloor).map(RatioRange::text).orElse("—");
    }

    /** "4K, 16K, 128K": the distinct token counts, smallest first. */
    private static String lengths(Stream<Integer> tokens) {
        return tokens.distinct().sorted().map(AttentionDocument::tokens).collect(Collectors.joining(", "));
    }
}

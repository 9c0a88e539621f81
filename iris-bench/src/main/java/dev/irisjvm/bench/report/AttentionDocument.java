package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.report.ReportHeader.orDash;

import dev.irisjvm.bench.results.AttentionBenchResult;
import dev.irisjvm.bench.results.AttentionBenchResult.LocalPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.Portable;
import dev.irisjvm.bench.results.AttentionBenchResult.RingPoint;
import dev.irisjvm.bench.results.AttentionBenchResult.SdpaPoint;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its charts into a folder from one attention benchmark run ({@link
 * dev.irisjvm.bench.attention.AttentionBench}): a PASS/FAIL table per target of issue 6 with the
 * measured numbers it was judged on, then the tables of every measurement. Everything comes from
 * the run's JSON; a figure the run did not measure shows as "not measured" and its target as not
 * judged. The raw JSON it links must be in that folder ({@link Report} copies it there).
 *
 * <pre>{@code
 * List<String> chartErrors = new AttentionDocument(result, context).write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class AttentionDocument extends Document {
    public static final String MARKDOWN = "attention.md";
    public static final String LOCAL_PNG = "attention-local.png";
    public static final String RING_PNG = "attention-ring.png";
    public static final String DECODE_PNG = "attention-decode.png";

    static final String PASS = "PASS";
    static final String FAIL = "**FAIL**";
    static final String NOT_JUDGED = "not judged";

    private final AttentionBenchResult run;
    private final BenchmarkTargets.Attention target;
    private final AttentionDecodeSection decode;

    public AttentionDocument(AttentionBenchResult run, Context context) {
        super(ReportKind.ATTENTION, context);
        this.run = run;
        this.target = context.targets().attention();
        this.decode = new AttentionDecodeSection(run, target.decodeMinSpeedup(), target.decodeFloor());
    }

    @Override
    String markdown(Charts charts) {
        return header() + targets() + context.findings() + (context.findings().isBlank() ? "" : "\n") + localSection(charts) + ringSection(charts)
                + decode.markdown(charts) + method();
    }

    // ---- targets -----------------------------------------------------------------------------------

    /** One target judged on one configuration. */
    record Verdict(String target, String config, String measured, String status) {}

    List<Verdict> verdicts() {
        List<Verdict> out = new ArrayList<>();
        String localLabel = "local ≥ " + target.localMinRatioToSdpa() + " × the fastest SDPA backend";
        for (LocalPoint p : local()) {
            SdpaPoint ref = fastestSdpa(p.seq(), p.causal());
            String config = "S " + tokens(p.seq()) + (p.causal() ? " causal" : "");
            if (ref == null || ref.tflops() == null || ref.tflops() <= 0) {
                out.add(new Verdict(localLabel, config, Sizes.number(p.tflops()) + " TFLOP/s; SDPA "
                        + (ref == null ? "not measured" : "failed: " + ref.error()), NOT_JUDGED));
            } else {
                double r = p.tflops() / ref.tflops();
                out.add(new Verdict(localLabel, config, Sizes.number(p.tflops()) + " vs " + Sizes.number(ref.tflops()) + " TFLOP/s ("
                        + ref.backend() + ") = " + Sizes.ratio3(r), r >= target.localMinRatioToSdpa() ? PASS : FAIL));
            }
            if (p.portable() != null && !p.portable().checkPassed()) {
                out.add(new Verdict("portable output = Iris output", config, p.portable().check(), FAIL));
            }
        }
        for (RingPoint p : ring()) {
            String config = "S " + tokens(p.totalSeq()) + (p.causal() ? " causal" : "") + ", " + run.world() + " ranks";
            double noComm = p.noCommUs();
            double r = p.ringUs() / noComm;
            out.add(new Verdict("ring ≤ " + target.ringMaxRatioToNoCommunication() + " × no-communication", config, ms(p.ringUs())
                    + " vs " + ms(noComm) + " ms = " + Sizes.ratio3(r), r <= target.ringMaxRatioToNoCommunication() ? PASS : FAIL));
            if (p.allGatherUs() > 0) {
                double g = p.ringUs() / p.allGatherUs();
                out.add(new Verdict(ringAllGatherTarget(), config, ms(p.ringUs()) + " vs " + ms(p.allGatherUs()) + " ms = "
                        + Sizes.ratio3(g), g <= target.ringMaxRatioToAllGather() ? PASS : FAIL));
            } else {
                out.add(new Verdict(ringAllGatherTarget(), config, "all-gather not measured", NOT_JUDGED));
            }
            long shardKv = shardKvBytes(p);
            double shards = (double) p.ringKvBytes() / shardKv;
            out.add(new Verdict("K/V per rank O(S / world)", config, Sizes.bytes(p.ringKvBytes()) + " = " + Sizes.number(shards)
                    + " × one shard's K+V (all-gather: " + Sizes.bytes(p.allGatherKvBytes()) + ")",
                    shards <= target.ringMaxKvShards() + 1e-9 ? PASS : FAIL));
            if (!p.check().startsWith("ok")) {
                out.add(new Verdict("ring output = all-gather output", config, p.check(), p.check().startsWith("not checked") ? NOT_JUDGED : FAIL));
            }
        }
        out.addAll(decode.verdicts());
        return out;
    }

    private String targets() {
        List<Verdict> verdicts = verdicts();
        MarkdownTable t = new MarkdownTable("target", "configuration", "measured", "status");
        verdicts.forEach(v -> t.row(v.target(), v.config(), v.measured(), v.status()));
        long pass = verdicts.stream().filter(v -> v.status().equals(PASS)).count();
        long judged = verdicts.stream().filter(v -> !v.status().equals(NOT_JUDGED)).count();
        return "## Targets\n\nIssue 6, on " + orDash(run.hardware()) + ": " + pass + " of " + judged + " judged target(s) met"
                + (judged < verdicts.size() ? ", " + (verdicts.size() - judged) + " not judged (a figure was not measured)" : "")
                + ". Ratios to three decimals.\n\n" + t.renderOrNone() + "\n";
    }

    // ---- sections ----------------------------------------------------------------------------------

    private String localSection(Charts charts) {
        List<LocalPoint> points = local();
        if (points.isEmpty()) {
            return "## Local kernel\n\nNot run.\n\n";
        }
        // Runs without --portable (all before it) keep their table as it was.
        boolean portable = points.stream().anyMatch(p -> p.portable() != null);
        List<String> header = new ArrayList<>(List.of("S", "mask", "Iris µs (min–max)", "Iris TFLOP/s", "SDPA default TFLOP/s",
                "SDPA flash TFLOP/s", "SDPA cuDNN TFLOP/s", "Iris ÷ default"));
        if (portable) {
            header.addAll(List.of("Iris portable µs (min–max)", "Iris portable TFLOP/s", "portable ÷ Iris", "portable check"));
        }
        MarkdownTable t = new MarkdownTable(header);
        List<String> labels = new ArrayList<>();
        Map<String, List<Double>> bars = AttentionCharts.series("Iris", "Iris portable", "SDPA default", "SDPA flash", "SDPA cuDNN");
        for (LocalPoint p : points) {
            SdpaPoint def = sdpa("default", p.seq(), p.causal());
            SdpaPoint flash = sdpa("flash", p.seq(), p.causal());
            SdpaPoint cudnn = sdpa("cudnn", p.seq(), p.causal());
            List<String> row = new ArrayList<>(Arrays.asList(tokens(p.seq()), p.causal() ? "causal" : "none", Sizes.span(p.medianUs(),
                    p.minUs(), p.maxUs()), Sizes.number(p.tflops()), sdpaCell(def), sdpaCell(flash), sdpaCell(cudnn),
                    def == null || def.tflops() == null ? null : Sizes.ratio3(p.tflops() / def.tflops())));
            Portable pp = p.portable();
            if (portable) {
                row.addAll(pp == null ? Collections.nCopies(4, null) : List.of(Sizes.span(pp.medianUs(), pp.minUs(), pp.maxUs()),
                        Sizes.number(pp.tflops()), Sizes.ratio3(pp.tflops() / p.tflops()), String.valueOf(pp.check())));
            }
            t.row(row);
            labels.add(tokens(p.seq()) + (p.causal() ? " causal" : ""));
            bars.get("Iris").add(p.tflops());
            bars.get("Iris portable").add(pp == null ? 0.0 : pp.tflops());
            bars.get("SDPA default").add(tflops(def));
            bars.get("SDPA flash").add(tflops(flash));
            bars.get("SDPA cuDNN").add(tflops(cudnn));
        }
        LocalPoint first = points.get(0);
        String sdpaLine = run.sdpa() == null ? "PyTorch SDPA was not measured in this run.\n\n"
                : "PyTorch " + run.sdpa().torch() + " (CUDA " + run.sdpa().cuda() + ") on " + run.sdpa().device() + ", "
                        + run.sdpa().warmup() + " warm-up and " + run.sdpa().reps() + " timed calls per point" + expandedNote() + ".\n\n";
        return "## Local kernel\n\n`Attention.forward` on one GPU: B " + first.batch() + ", " + first.qHeads() + " query heads, "
                + first.kvHeads() + " K/V heads, head size " + first.headDim() + ", " + first.dtype() + ". TFLOP/s = 4 B Hq S² D ÷ time, "
                + "halved when causal.\n\n" + sdpaLine + (portable ? portableLine() : "") + t.render() + "\n"
                + charts.link(LOCAL_PNG, "local kernel TFLOP/s against PyTorch SDPA", () -> AttentionCharts.bars(
                        "Attention forward on one GPU, TFLOP/s", "TFLOP/s", labels, withoutEmpty(bars), charts.file(LOCAL_PNG)));
    }

    private String ringSection(Charts charts) {
        List<RingPoint> points = ring();
        if (points.isEmpty()) {
            return "## Ring attention\n\nNot run (it needs at least 2 ranks).\n\n";
        }
        MarkdownTable t = new MarkdownTable("S (per rank)", "mask, sharding", "ring ms", "steps, no comm ms", "one local launch ms",
                "ring ÷ no comm", "all-gather + local ms", "of which all-gather ms", "ring ÷ all-gather", "per-rank TFLOP/s",
                "K/V per rank: ring", "K/V per rank: all-gather", "check");
        List<String> labels = new ArrayList<>();
        Map<String, List<Double>> bars = AttentionCharts.series("ring", "no communication", "all-gather K/V + local");
        for (RingPoint p : points) {
            t.row(tokens(p.totalSeq()) + " (" + tokens(p.shard()) + ")", (p.causal() ? "causal, " : "none, ") + p.sharding().toLowerCase(Locale.ROOT),
                    ms(p.ringUs()), ms(p.stepsUs()), p.localUs() > 0 ? ms(p.localUs()) : null, Sizes.ratio3(p.ringUs() / p.noCommUs()),
                    p.allGatherUs() > 0 ? ms(p.allGatherUs()) : null, p.gatherOnlyUs() > 0 ? ms(p.gatherOnlyUs()) : null,
                    p.allGatherUs() > 0 ? Sizes.ratio3(p.ringUs() / p.allGatherUs()) : null, Sizes.number(p.perRankTflops()),
                    Sizes.bytes(p.ringKvBytes()), Sizes.bytes(p.allGatherKvBytes()), p.check());
            labels.add(tokens(p.totalSeq()) + (p.causal() ? " causal" : ""));
            bars.get("ring").add(p.ringUs() / 1000);
            bars.get("no communication").add(p.noCommUs() / 1000);
            bars.get("all-gather K/V + local").add(p.allGatherUs() / 1000);
        }
        RingPoint first = points.get(0);
        return "## Ring attention\n\n`RingAttention.forward` over " + run.world() + " ranks: B " + first.batch() + ", " + first.qHeads()
                + " query heads, " + first.kvHeads() + " K/V heads, head size " + first.headDim() + ", " + first.dtype()
                + "; zig-zag sharding when causal, contiguous otherwise. \"steps, no comm\": the ring's own launches on this rank's "
                + "buffers, nothing copied (on two ranks one launch: both steps, the state kept in registers). \"one local launch\": not causal, `Attention.forward` of the rank's queries against all S "
                + "keys; causal, the causal kernel on the whole sequence ÷ world (the same FLOPs per rank). The no-communication "
                + "reference of the target is the faster of the two. \"all-gather + local\": NCCL all-gather of K and V, then, not "
                + "causal, one local launch on the gathered [B, Hkv, S, D] (grouped per-head all-gathers); causal, the ring's "
                + "launches on the gathered zig-zag shards (the plain causal kernel cannot follow zig-zag positions). K/V per rank: "
                + "ring, the own shard and its receive buffers (one on two ranks, two on more); all-gather, the own shard and the gathered K and V.\n\n" + t.render()
                + "\n" + charts.link(RING_PNG, "ring attention against its references",
                () -> AttentionCharts.bars("Ring attention over " + run.world() + " GPUs, ms per call", "ms", labels, bars,
                        charts.file(RING_PNG)));
    }

    private String header() {
        return new ReportHeader("Attention benchmarks", "Issue 6: the single-GPU attention kernel against PyTorch SDPA, "
                + "sequence-parallel ring attention against NCCL all-gather of K/V plus the same local kernel, and "
                + decode.headerPhrase() + ", all measured in one run.", run)
                .item("ranks", Integer.toString(run.world()))
                .item("baseline", "local: the fastest of PyTorch SDPA's backends measured in this run (default, FlashAttention-2, "
                        + "cuDNN); ring: NCCL all-gather of K/V, then the same local kernel; decode: " + decode.headerBaseline())
                .item("timing", run.warmup() + " untimed call(s) per point, then the timed calls queued behind a gate, each between "
                        + "its own CUDA events; the median, the slowest rank's for ring and decode (see Method)")
                .end(context.rawFiles(), "Commands", context.runCommand(), List.of(orDash(run.command())));
    }

    private String method() {
        return "## Method\n\n"
                + "- Inputs standard normal, generated on the GPU. Per point " + run.warmup() + " untimed call(s), then the timed calls "
                + "queued behind a gate (a kernel that waits for a host flag, opened once every call is queued), each between its own "
                + "pair of CUDA events; the median counts. Work that spans ranks counts its slowest rank's median.\n"
                + "- Ring attention includes its opening and closing device barriers and the copy-engine transfers of the next K/V "
                + "shard, which run on a second stream while the current step computes.\n"
                + decode.methodLine()
                + "- Correctness is the GPU tests' job (`AttentionGpuTest`: double-precision CPU references, poisoned outputs); the "
                + "\"check\" columns compare the paths of this run with each other once, on fresh poisoned outputs.\n";
    }

    // ---- helpers -----------------------------------------------------------------------------------

    private List<LocalPoint> local() {
        return run.local() == null ? List.of() : run.local();
    }

    private List<RingPoint> ring() {
        return run.ring() == null ? List.of() : run.ring();
    }

    /**
     * The fastest SDPA backend that ran this shape (issue 29: the baseline at its strongest), or
     * the default backend's failure when none ran, or null when SDPA was not measured.
     */
    SdpaPoint fastestSdpa(int seq, boolean causal) {
        if (run.sdpa() == null || run.sdpa().points() == null) {
            return null;
        }
        return run.sdpa().points().stream().map(SdpaPoint::backend).distinct().map(b -> sdpa(b, seq, causal))
                .filter(p -> p != null && p.tflops() != null && p.tflops() > 0).max(Comparator.comparingDouble(SdpaPoint::tflops))
                .orElseGet(() -> sdpa("default", seq, causal));
    }

    /**
     * SDPA's figure for a backend and shape: the faster of its GQA forms (enable_gqa, K/V expanded)
     * that ran; when none ran, a point carrying their errors; null when not measured.
     */
    SdpaPoint sdpa(String backend, int seq, boolean causal) {
        if (run.sdpa() == null || run.sdpa().points() == null) {
            return null;
        }
        List<SdpaPoint> forms = run.sdpa().points().stream().filter(p -> backend.equals(p.backend()) && p.seq() == seq
                && p.causal() == causal).toList();
        if (forms.isEmpty()) {
            return null;
        }
        return forms.stream().filter(p -> p.tflops() != null && p.tflops() > 0).max(Comparator.comparingDouble(SdpaPoint::tflops))
                .orElseGet(() -> new SdpaPoint(backend, seq, causal, null, 0, null, null, null, null, forms.stream()
                        .map(p -> (p.gqa() == null ? "" : p.gqa() + ": ") + p.error()).collect(Collectors.joining("; "))));
    }

    private static String portableLine() {
        return "Iris portable: the portable mainloop forced (`Attention.create(GemmMainloop.PORTABLE)`, mma.sync, the kernels of GPUs "
                + "without wgmma), timed the same way on the same inputs after Iris; its check compares its output with Iris's "
                + "(max |portable − Iris| ≤ 2⁻⁶ max |o| over sampled elements).\n\n";
    }

    private String expandedNote() {
        return "; grouped-query attention measured both through `enable_gqa=True` and with K and V expanded to the query heads "
                + "beforehand (not timed), the faster of the two counting (marked \"K/V expanded\" when that was the faster)";
    }

    private static String sdpaCell(SdpaPoint p) {
        if (p == null) {
            return null;
        }
        if (p.tflops() == null) {
            return "failed: " + String.valueOf(p.error()).replace('|', '/');
        }
        return Sizes.number(p.tflops()) + ("expanded".equals(p.gqa()) ? " (K/V expanded)" : "");
    }

    private static double tflops(SdpaPoint p) {
        return p == null || p.tflops() == null ? 0.0 : p.tflops();
    }

    private static Map<String, List<Double>> withoutEmpty(Map<String, List<Double>> bars) {
        Map<String, List<Double>> out = new LinkedHashMap<>();
        bars.forEach((k, v) -> {
            if (v.stream().anyMatch(x -> x > 0)) {
                out.put(k, v);
            }
        });
        return out;
    }

    /** One shard's K and V bytes: 2 B Hkv (S / W) D x 2 bytes. */
    static long shardKvBytes(RingPoint p) {
        return 2L * p.batch() * p.kvHeads() * p.shard() * p.headDim() * 2;
    }

    /** 4096 -> "4K", 131072 -> "128K", 1000 -> "1000". */
    static String tokens(long n) {
        return n % 1024 == 0 ? (n / 1024) + "K" : Long.toString(n);
    }

    static String ms(double us) {
        return Sizes.number(us / 1000);
    }

    private String ringAllGatherTarget() {
        double bound = target.ringMaxRatioToAllGather();
        return "ring ≤ " + (bound == 1 ? "" : bound + " × ") + "all-gather K/V + local";
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ccl.Tolerance;
import dev.irisjvm.bench.ccl.Tolerance.Rounding;
import dev.irisjvm.bench.report.CclFigures.Figure;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its charts ({@value #LATENCY_PNG}, {@value #BUSBW_PNG}) into a
 * folder from one collectives sweep and the JMH results of the same run. The raw files it links to
 * must already be in that folder ({@link Report} copies them there).
 *
 * <pre>{@code
 * List<String> chartErrors = new CclDocument(sweep, context).write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class CclDocument extends SweepDocument {
    public static final String MARKDOWN = "collectives.md";
    public static final String LATENCY_PNG = "ccl-allreduce-latency.png";
    public static final String BUSBW_PNG = "ccl-busbw.png";
    /** The ops of the bus-bandwidth chart. */
    static final List<String> BUSBW_OPS = List.of("all_reduce", "all_gather", "reduce_scatter", "all_to_all");

    public CclDocument(SweepResult sweep, Context context) {
        super(ReportKind.CCL, sweep, context);
    }

    @Override
    String markdown(Charts charts) {
        int world = Math.max(1, sweep.worldSize());
        CclFigures figures = new CclFigures(sweep.measurements(), world);
        CclSettings settings = CclSettings.fromCommand(sweep.command());
        return header(figures, settings)
                + CclTargets.evaluate(figures, settings, context.targets().collectives()).section()
                + findings
                + AutoChoice.section(figures, settings)
                + charts(figures, charts)
                + opSections(figures, settings)
                + method(figures, settings)
                + jmhSection()
                + checks(figures);
    }

    private String header(CclFigures figures, CclSettings settings) {
        return headerEnd(new ReportHeader("Iris collectives benchmarks", "Device-initiated collectives of "
                + "`dev.irisjvm.kernels.ccl.Collectives` (all-reduce with each algorithm, all-gather, reduce-scatter, all-to-all, "
                + "broadcast) against NCCL measured in the same run, launched eagerly and replayed from CUDA graphs, from the "
                + "sweep's smallest to its largest size.", sweep)
                .item("world size", sweep.worldSize() + " rank(s)")
                .item("data", settings.dtype() + ", reduce op " + settings.reduceOp() + ", inputs uniform in [-1, 1)")
                .item("measurements", String.valueOf(figures.index().all().size()))
                .item("baseline", baselines(figures, settings)));
    }

    /**
     * The header's baseline item: NCCL's ways and the rule that picks one per size, how the small
     * sizes are timed, then what this run lacks of them (unavailable and why, or not yet measured).
     */
    static String baselines(CclFigures figures, CclSettings settings) {
        String calls = settings.eagerCalls() > 1 ? settings.eagerCalls()
                + " eager calls back to back per timed repetition (nccl-tests' way)" : "one eager call per timed repetition";
        String ways = "NCCL in the same run, timed one after the other at every size: on plain device buffers (`nccl`), on "
                + "window-registered symmetric buffers (`nccl_window`: `ncclMemAlloc` + `ncclCommWindowRegister(..., "
                + "NCCL_WIN_COLL_SYMMETRIC)`, NCCL ≥ 2.27's symmetric kernels) and, for all-gather and broadcast, as one group of "
                + "`ncclSend` / `ncclRecv` moving the same bytes into the same output (`nccl_p2p`); ratios and targets take the "
                + "fastest of them at each size. " + calls + " and graph replays"
                + (settings.oneCallMaxBytes() > 0 ? "; up to " + CclFigures.sizeLabel(settings.oneCallMaxBytes()) + ", also one "
                        + "call from Java to its completion, eager and as a one-call graph (`_call`), which targets A and B judge. " : ". ");
        List<String> lacking = new ArrayList<>();
        if (figures.ops().stream().noneMatch(figures::hasWindowBaseline)) {
            lacking.add(figures.windowUnavailable().map(why -> "In this run " + CclFigures.WINDOW_UNAVAILABLE + why + ".")
                    .orElse("This run predates the window-registered baseline."));
        }
        if (figures.ops().stream().anyMatch(CclFigures.P2P_OPS::contains)
                && figures.ops().stream().noneMatch(op -> figures.measured(op, CclFigures.NCCL_P2P))) {
            lacking.add("It has no `nccl_p2p` (sweeps before 2026-12-06 did not time it).");
        }
        if (figures.ops().stream().allMatch(op -> figures.oneCallImpls(op).isEmpty())) {
            lacking.add("It has no single-call timing (sweeps before 2026-12-06 did not time it), so targets A and B are not measured.");
        }
        return ways + String.join(" ", lacking) + (lacking.isEmpty() ? "" : " The ratios are against what it measured, pending the "
                + "next two-GPU run.");
    }

    // ---- charts ----------------------------------------------------------------------------------

    private static String charts(CclFigures figures, Charts charts) {
        StringBuilder sb = new StringBuilder("## Charts\n\n");
        SizeChart latency = new SizeChart("All-reduce latency vs size (slowest rank's median per call)", "µs", true);
        for (String impl : figures.impls("all_reduce")) {
            String name = impl + (CclFigures.isGraph(impl) ? "" : " (eager)");
            TreeMap<Long, Double> curve = figures.curve("all_reduce", impl, Figure::us);
            if (CclFigures.isNccl(impl)) {
                latency.referenceSeries(name, curve);
            } else {
                latency.series(name, curve);
            }
        }
        sb.append(charts.link(latency, LATENCY_PNG, "All-reduce latency vs size", "No data for " + LATENCY_PNG + ".\n\n"));

        SizeChart bus = new SizeChart("Bus bandwidth vs size (iris: best eager implementation per size; NCCL dashed)", "bus GB/s", true);
        for (String op : BUSBW_OPS) {
            TreeMap<Long, Double> best = new TreeMap<>();
            for (String impl : figures.irisImpls(op, false)) {
                figures.curve(op, impl, Figure::busGbps).forEach((k, v) -> best.merge(k, v, Math::max));
            }
            if (!best.isEmpty()) {
                bus.series(op + " iris" + (op.equals("all_reduce") ? " (best algorithm)" : ""), best);
            }
            for (String baseline : CclFigures.BASELINES) {
                TreeMap<Long, Double> nccl = figures.curve(op, baseline, Figure::busGbps);
                if (!nccl.isEmpty()) {
                    bus.referenceSeries(op + " " + baseline, nccl);
                }
            }
        }
        sb.append(charts.link(bus, BUSBW_PNG, "Bus bandwidth vs size", "No data for " + BUSBW_PNG + ".\n\n"));
        return sb.toString();
    }

    // ---- tables per op ---------------------------------------------------------------------------

    private String opSections(CclFigures figures, CclSettings settings) {
        StringBuilder sb = new StringBuilder();
        for (String op : figures.ops()) {
            sb.append("## ").append(op).append("\n\n");
            double factor = BusBandwidth.factor(op, figures.world());
            sb.append("Size: per-rank ").append(sizeMeaning(op)).append(". Bus bandwidth = bytes ÷ time × ")
                    .append(BusBandwidth.formula(op, figures.world())).append(" (n = ").append(figures.world()).append(").");
            if (Double.isNaN(factor)) {
                sb.append(" (no nccl-tests factor for this op: bus GB/s not shown)");
            }
            sb.append("\n\n");
            for (boolean graph : new boolean[] {false, true}) {
                List<String> impls = figures.impls(op).stream().filter(i -> CclFigures.isGraph(i) == graph).collect(Collectors.toList());
                if (impls.isEmpty()) {
                    continue;
                }
                String mode = graph ? "replayed from a CUDA graph (" + settings.graphCalls() + " calls per graph; time per call)"
                        : settings.eagerCalls() == 1 ? "launched eagerly"
                        : "launched eagerly (" + settings.eagerCalls() + " calls back to back; time per call)";
                sb.append("### ").append(op).append(", ").append(mode).append("\n\n");
                sb.append(latencyTable(figures, op, impls, graph, false)).append('\n');
                sb.append(bandwidthTable(figures, op, impls)).append('\n');
            }
            for (boolean graph : new boolean[] {false, true}) {
                List<String> impls = figures.oneCallImpls(op).stream().filter(i -> CclFigures.isGraph(i) == graph).toList();
                if (!impls.isEmpty()) {
                    sb.append("### ").append(op).append(", one call from Java to its completion, ")
                            .append(graph ? "replaying a one-call CUDA graph" : "launched eagerly").append("\n\n")
                            .append(latencyTable(figures, op, impls, graph, true)).append('\n');
                }
            }
        }
        return sb.toString();
    }

    static String sizeMeaning(String op) {
        return switch (op) {
            case "all_reduce" -> "input (= output) bytes";
            case "all_gather" -> "output bytes (world × input), as nccl-tests counts them";
            case "reduce_scatter" -> "input bytes (world × output), as nccl-tests counts them";
            case "all_to_all" -> "input (= output) bytes, world blocks";
            case "broadcast" -> "buffer bytes";
            default -> "bytes";
        };
    }

    private static String latencyTable(CclFigures figures, String op, List<String> impls, boolean graph, boolean oneCall) {
        boolean withRatio = impls.stream().anyMatch(CclFigures::isNccl);
        boolean several = impls.stream().filter(i -> CclFigures.isNccl(i) && figures.measured(op, i)).count() > 1;
        List<String> header = new ArrayList<>(List.of("size"));
        impls.forEach(i -> header.add(i + " µs"));
        List<String> iris = impls.stream().filter(i -> !CclFigures.isNccl(i)).collect(Collectors.toList());
        if (several) {
            header.add("baseline");
        }
        if (withRatio) {
            iris.forEach(i -> header.add(i + " vs NCCL"));
        }
        MarkdownTable t = new MarkdownTable(header);
        for (long bytes : figures.sizes(op)) {
            if (impls.stream().noneMatch(i -> figures.figure(op, i, bytes).isPresent() || figures.failed(op, i, bytes))) {
                continue;   // one call is timed at the small sizes only
            }
            List<Object> row = new ArrayList<>(List.of(CclFigures.sizeLabel(bytes)));
            impls.forEach(i -> row.add(cell(figures, op, i, bytes, Figure::us)));
            Optional<CclFigures.Baseline> n = figures.baseline(op, graph, oneCall, bytes);
            if (several) {
                row.add(n.map(CclFigures.Baseline::impl).orElse("—"));
            }
            if (withRatio) {
                for (String i : iris) {
                    Optional<Figure> f = figures.figure(op, i, bytes);
                    row.add(f.isPresent() && n.isPresent() ? Sizes.ratio(n.get().figure().us() / f.get().us()) : "—");
                }
            }
            t.row(row);
        }
        String ratio = !withRatio ? "" : several
                ? "; \"vs NCCL\" = the time of the fastest NCCL (column \"baseline\") ÷ iris's (> 1: iris faster)"
                : "; \"vs NCCL\" = NCCL's time ÷ iris's (> 1: iris faster)";
        return "Time per call, µs (slowest rank's median)" + ratio + ":\n\n" + t.render();
    }

    private static String bandwidthTable(CclFigures figures, String op, List<String> impls) {
        List<String> header = new ArrayList<>(List.of("size"));
        impls.forEach(i -> header.add(i + " bus GB/s"));
        impls.forEach(i -> header.add(i + " alg GB/s"));
        MarkdownTable t = new MarkdownTable(header);
        for (long bytes : figures.sizes(op)) {
            List<Object> row = new ArrayList<>(List.of(CclFigures.sizeLabel(bytes)));
            impls.forEach(i -> row.add(cell(figures, op, i, bytes, Figure::busGbps)));
            impls.forEach(i -> row.add(cell(figures, op, i, bytes, Figure::algGbps)));
            t.row(row);
        }
        return "Bandwidth, GB/s (1e9 bytes per second; bus = algorithm × the nccl-tests factor):\n\n" + t.render();
    }

    private static String cell(CclFigures figures, String op, String impl, long bytes, java.util.function.ToDoubleFunction<Figure> v) {
        Optional<Figure> f = figures.figure(op, impl, bytes);
        if (f.isPresent()) {
            return Sizes.number(v.applyAsDouble(f.get()));
        }
        return figures.failed(op, impl, bytes) ? "failed" + RankMatrix.BAD_CHECK : "—";
    }

    // ---- method ----------------------------------------------------------------------------------

    private String method(CclFigures figures, CclSettings settings) {
        StringBuilder sb = new StringBuilder("## Method\n\n");
        sb.append("- **Eager**: for every op, size and implementation, every rank runs the warm-up repetitions, then queues ")
                .append("the timed repetitions behind a gate kernel (so the host's launch overhead is in no timing): each repetition ")
                .append("is a device barrier of all ranks (outside the timing, so launch skew between processes does not count), ")
                .append("a CUDA event, ");
        if (settings.eagerCalls() == 1) {
            sb.append("one call, a CUDA event (the call also waits out the barrier's exit skew, one NVLink trip). ");
        } else {
            sb.append(settings.eagerCalls()).append(" calls launched back to back, a CUDA event; time per call = repetition time ÷ ")
                    .append(settings.eagerCalls()).append(", as nccl-tests times (the barrier's exit skew, one NVLink trip, is ")
                    .append("spread over the calls). ");
        }
        sb.append("Each rank records the median of its repetitions; the figure is the ")
                .append("slowest rank's median, as nccl-tests reports the slowest rank.\n");
        sb.append("- **Graph**: ").append(settings.graphCalls()).append(" calls are captured back to back into one CUDA graph ")
                .append("(after eager warm-up calls), which is replayed like an eager call (device barrier, event, replay, event); ")
                .append("time per call = replay time ÷ ").append(settings.graphCalls()).append(". Variants end in `_graph`.\n");
        if (figures.ops().stream().anyMatch(op -> !figures.oneCallImpls(op).isEmpty())) {
            sb.append("- **One call** (`_call`, sizes up to ").append(CclFigures.sizeLabel(settings.oneCallMaxBytes()))
                .append("): each repetition is a device barrier of all ranks that this host waits for (untimed), then ")
                .append("`System.nanoTime()`, one call (or the replay of a graph of one call), a stream synchronize, ")
                .append("`System.nanoTime()`: launch to completion as a Java training step that waits for its collective sees ")
                .append("it, the launch and the ranks' skew leaving the barrier included. Targets A and B judge these.\n");
        }
        sb.append(windowMethod(figures));
        if (figures.ops().stream().anyMatch(op -> figures.measured(op, CclFigures.NCCL_P2P))) {
            sb.append("- **NCCL send/receive** (`nccl_p2p`): one NCCL group of `ncclSend` / `ncclRecv` on the same buffers as ")
                    .append("plain NCCL; all-gather: every rank sends its input to every rank (itself included) and receives rank ")
                    .append("r's into block r; broadcast: the root sends to every other rank. Timed and checked as plain NCCL.\n");
        }
        sb.append("- **Inputs**: fresh random values per size (uniform in [-1, 1), seeded per point and rank); every ")
                .append("implementation of a size reads the same input, and its output is poisoned (all bits set) before it runs.\n");
        sb.append("- **Checks**: after its timing, every variant's output is compared with a reference output on the same input: ")
                .append("NCCL's, or, when NCCL is unavailable, one the host computes from every rank's input (float sum in rank ")
                .append("order, rounded once). Data movement (all-gather, all-to-all, broadcast) must match bit for bit; reductions ")
                .append("bit for bit, or else within a bound (below). A figure whose check failed on any rank is left out of every ")
                .append("table, chart and target and listed under \"Data checks\".\n");
        sb.append("- **Bus bandwidth**: algorithm bandwidth (bytes ÷ time) × nccl-tests' factor, n = ").append(figures.world()).append(": ");
        List<String> factors = new ArrayList<>();
        for (String op : CclFigures.OP_ORDER) {
            factors.add(op + " " + BusBandwidth.formula(op, figures.world()));
        }
        sb.append(String.join(", ", factors)).append(".\n\n");
        sb.append(toleranceText(figures.world(), settings)).append("\n\n");
        return sb.toString();
    }

    /** How the window-registered baseline was run, where the sweep has it. */
    private static String windowMethod(CclFigures figures) {
        if (figures.ops().stream().noneMatch(figures::hasWindowBaseline)) {
            return "";
        }
        return "- **Window-registered NCCL** (`nccl_window`): two buffers from `ncclMemAlloc` of the sweep's largest size, "
                + "registered once per run as symmetric windows (`NCCL_WIN_COLL_SYMMETRIC`) and deregistered at its end. At every "
                + "size the input is copied into the input window (untimed) and the output window is poisoned; it is timed right "
                + "after plain NCCL in the same way, and its output checked against the same reference.\n";
    }

    /** The reduction bounds of this run's type, op and world, in words and numbers. */
    static String toleranceText(int world, CclSettings settings) {
        DType t = OptionChecks.dtype(settings.dtype());
        ReduceOp op;
        try {
            op = ReduceOp.valueOf(settings.reduceOp().toUpperCase(Locale.ROOT));
            OptionChecks.require(t != null, settings.dtype());
        } catch (IllegalArgumentException e) {
            return "Reduction bounds: unknown type or op in the sweep's command (" + settings.dtype() + ", " + settings.reduceOp() + ").";
        }
        Rounding reference = settings.nccl() ? Rounding.NCCL : Rounding.ONCE;
        double once = Tolerance.bound(op, t, world, Rounding.ONCE, reference);
        if (once == 0) {
            return "Reduction bound for this run (" + settings.dtype() + ", " + settings.reduceOp() + ", " + world
                    + " ranks): exact. Every implementation computes each element with one rounding of the same value "
                    + "(MAX/MIN pick an input; a two-rank sum rounds a + b once), so outputs must equal the reference as numbers "
                    + "(+0 = -0).";
        }
        double step = Tolerance.bound(op, t, world, Rounding.EVERY_STEP, reference);
        double nccl = Tolerance.bound(op, t, world, Rounding.NCCL, reference);
        return "Reduction bounds for this run (" + settings.dtype() + ", " + settings.reduceOp() + ", " + world + " ranks, reference "
                + (settings.nccl() ? "NCCL" : "host, rounded once") + "): |output − reference| ≤ "
                + String.format(Locale.ROOT, "%.3g", once) + " for outputs rounded once (ONE_SHOT, TWO_SHOT, COPY_ENGINE, AUTO, reduce-scatter), "
                + String.format(Locale.ROOT, "%.3g", step) + " for outputs rounded at every step (RING, ATOMIC), "
                + String.format(Locale.ROOT, "%.3g", nccl) + " for NCCL's own timed runs: each side's worst-case error with "
                + "|inputs| ≤ 1 (see `dev.irisjvm.bench.ccl.Tolerance`).";
    }

    /** JMH's own table, or why there is none (this report has no JMH targets). */
    private String jmhSection() {
        if (!jmh.isEmpty()) {
            return JmhTable.section(jmh, jmhProblems);
        }
        StringBuilder sb = new StringBuilder("## JMH\n\n");
        jmhProblems.forEach(p -> sb.append("- not used: ").append(p).append('\n'));
        return sb.append(jmhProblems.isEmpty() ? "" : "\n").append("No JMH results were given.\n\n").toString();
    }

    // ---- checks ----------------------------------------------------------------------------------

    private static String checks(CclFigures figures) {
        StringBuilder sb = new StringBuilder("## Data checks\n\n");
        List<Measurement> bad = figures.index().all().stream().filter(m -> !SweepIndex.verified(m) || m.medianUs() <= 0)
                .collect(Collectors.toList());
        if (bad.isEmpty()) {
            return sb.append("Every one of the ").append(figures.index().all().size())
                    .append(" measurements verified its output after the timed runs (check = ok).\n\n").toString();
        }
        Map<String, Long> byImpl = new TreeMap<>();
        bad.forEach(m -> byImpl.merge(m.op() + " " + m.impl(), 1L, Long::sum));
        MarkdownTable t = new MarkdownTable("op", "impl", "size", "rank", "check");
        bad.forEach(m -> t.row(m.op(), m.impl(), m.bytes() > 0 ? CclFigures.sizeLabel(m.bytes()) : "—", m.issuer(),
                m.check() == null ? "(no timing recorded)" : m.check()));
        return sb.append(bad.size()).append(" measurement(s) have no verified figure (their check failed, or the point could "
                        + "not run); they are marked").append(RankMatrix.BAD_CHECK).append(" in the tables and left out of every "
                        + "chart and target. By series: ")
                .append(byImpl.entrySet().stream().map(e -> e.getKey() + " × " + e.getValue()).collect(Collectors.joining(", ")))
                .append(".\n\n").append(t.render()).append('\n').toString();
    }
}

package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.report.CheckedPoints.time;
import static dev.irisjvm.bench.report.CheckedPoints.timed;

import dev.irisjvm.bench.results.NodesMeasurement;
import dev.irisjvm.bench.results.NodesSweepResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} from one run of the nodes benchmark ({@code dev.irisjvm.bench.nodes.NodesSweep}):
 * world collectives over every rank of a job of several nodes, by {@code WorldCollectives} in two
 * levels (the node on the symmetric heap, the rail in NCCL) against one flat NCCL collective over
 * every rank, per operation and size: each one's time and bus bandwidth, flat ÷ hierarchical, and
 * the output check. There is no target: the report compares, it does not judge. Where the nodes
 * were simulated on one host it says, before any figure, that NCCL between them went over loopback
 * sockets and that the figures say nothing about a real network; where ranks shared a GPU it shows
 * the times and the check but no ratio and no bandwidth. Without a run, it says what the benchmark
 * measures, its command, and that the comparison is pending.
 *
 * <pre>{@code
 * new NodesDocument(run, context).write(Path.of("docs/benchmarks"));
 * new NodesDocument(null, context).write(Path.of("docs/benchmarks"));   // no run yet
 * }</pre>
 */
public final class NodesDocument extends Document {
    public static final String MARKDOWN = "nodes.md";
    /** The command that runs the benchmark and writes this report. */
    static final String COMMAND = "bin/iris-bench nodes --nodes 2 -n 1 --out docs/benchmarks";
    /** The cost model of a real cluster, from docs/benchmarks, where the report is written. */
    static final String COST_MODEL = "../multinode-cost-model.md";
    static final String TITLE = "Iris world collectives across nodes: two levels against flat NCCL";
    static final String INTRO = "All-reduce, all-gather, reduce-scatter and all-to-all over every rank of a job of several nodes "
            + "by `WorldCollectives`, in two levels (inside a node on the symmetric heap, between nodes in NCCL on the rail), "
            + "against one flat NCCL collective over every rank, on the same inputs, measured in the same run on every rank.";
    static final String PENDING = "The comparison is pending a run with one GPU per rank, i.e. on a machine with as many GPUs as "
            + "ranks: nothing has been measured yet.";
    static final String SIMULATED_NOTE = "> **Simulated nodes: these figures say nothing about a real network.** The nodes of this "
            + "run were simulated on one host, so NCCL between them went over loopback sockets, not over a network. The figures "
            + "compare the two implementations on this machine only. For a real cluster (NVLink inside a node, 400 Gb/s per GPU "
            + "between nodes) the model is [docs/multinode-cost-model.md](" + COST_MODEL + "), which says when two levels beat "
            + "a flat NCCL ring.";
    static final String ONE_RANK_PER_NODE_NOTE = "> **One rank per node: no node level.** With one rank on each node "
            + "`WorldCollectives` has nothing to do on the heap: each call is NCCL's on the rail communicator, which then holds "
            + "every rank (the all-to-all: one NCCL group of sends and receives over every rank and a copy of the rank's own "
            + "block). Both columns therefore time NCCL over the same ranks, and the ratio measures only what the two-level entry "
            + "point adds. The node level takes part from 2 ranks per node on.";
    /** The operations in the order the report lists them; others the run may hold follow in the run's order. */
    static final List<String> OPS = List.of("all_reduce", "all_gather", "reduce_scatter", "all_to_all");
    static final String WRONG_OUTPUT = "— (output wrong)";

    private final NodesSweepResult run;

    /** One operation at one size: each implementation's point, null where it was not run. */
    record Row(String op, long bytes, Map<String, NodesMeasurement> impls) {
        NodesMeasurement hierarchical() {
            return impls.get(NodesMeasurement.HIERARCHICAL);
        }

        NodesMeasurement flat() {
            return impls.get(NodesMeasurement.FLAT);
        }

        /** Flat NCCL's median ÷ the hierarchical one's: above 1 the two levels are faster; NaN where either is missing or wrong. */
        double ratio() {
            NodesMeasurement h = hierarchical();
            NodesMeasurement f = flat();
            return timed(h) && !h.checkFailed() && timed(f) && !f.checkFailed() ? f.medianUs() / h.medianUs() : Double.NaN;
        }

        boolean checkFailed() {
            return impls.values().stream().anyMatch(NodesMeasurement::checkFailed);
        }
    }

    /** @param run the run, or null where none was made yet */
    public NodesDocument(NodesSweepResult run, Context context) {
        super(ReportKind.NODES, context);
        this.run = run;
    }

    /** The rows by operation ({@link #OPS} first) and size, smallest first. */
    List<Row> rows() {
        Map<String, Map<Long, Map<String, NodesMeasurement>>> byOp = new LinkedHashMap<>();
        OPS.forEach(op -> byOp.put(op, new LinkedHashMap<>()));
        for (NodesMeasurement m : run.measurements()) {
            byOp.computeIfAbsent(m.op(), k -> new LinkedHashMap<>()).computeIfAbsent(m.bytes(), k -> new LinkedHashMap<>())
                    .putIfAbsent(m.impl(), m);
        }
        List<Row> rows = new ArrayList<>();
        byOp.forEach((op, sizes) -> sizes.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> rows.add(new Row(op, e.getKey(), e.getValue()))));
        return rows;
    }

    @Override
    String markdown(Charts charts) {
        if (run == null) {
            return pending(TITLE, INTRO + " " + PENDING, "pending a run on a machine with as many GPUs as ranks (2 for 2 nodes of 1 "
                    + "rank): `" + COMMAND + "`", COMMAND, method());
        }
        List<Row> rows = rows();
        return header(rows) + notes(rows) + findings + times(rows) + method() + checks(rows);
    }

    private String header(List<Row> rows) {
        String dtypes = run.measurements().stream().map(NodesMeasurement::dtype).distinct().collect(Collectors.joining(", "));
        return new ReportHeader(TITLE, INTRO, run)
                .item("ranks", run.worldSize() + " = " + run.nodes() + " nodes × " + run.ranksPerNode() + " rank(s) per node"
                        + SharedGpus.ranks(run))
                .item("nodes", run.simulatedNodes() ? "simulated on one host (`bin/iris-run --simulate-nodes`): NCCL between them "
                        + "over loopback sockets" : "separate hosts")
                .item("operations", rows.stream().map(Row::op).distinct().collect(Collectors.joining(", "))
                        + (dtypes.isEmpty() ? "" : "; " + dtypes) + "; seed " + run.seed())
                .item("timing", run.warmup() + " warm-up and " + run.reps() + " timed calls per implementation, point and round, "
                        + run.rounds() + " round(s)")
                .end(context, run.command());
    }

    /** What a reader must know before any figure: where the network was not one, what was not compared, what was wrong. */
    private String notes(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        if (run.simulatedNodes()) {
            sb.append(SIMULATED_NOTE).append("\n\n");
        }
        if (run.ranksPerNode() == 1) {
            sb.append(ONE_RANK_PER_NODE_NOTE).append("\n\n");
        }
        if (run.sharedGpu()) {
            sb.append("> **Ranks shared GPUs** (up to ").append(run.maxRanksPerGpu()).append(" per GPU): their kernels took turns "
                    + "on each GPU, so the times measure the turns. No ratio and no bus bandwidth is shown; the output check "
                    + "stands. Run with one GPU per rank to compare.\n\n");
        }
        long wrong = rows.stream().filter(Row::checkFailed).count();
        if (wrong > 0) {
            sb.append("> **Output check failed** at ").append(wrong).append(" point(s): see [Output check](#output-check). "
                    + "A wrong output has no ratio, however fast.\n\n");
        }
        return sb.toString();
    }

    private String times(List<Row> rows) {
        boolean compare = !run.sharedGpu();
        StringBuilder sb = new StringBuilder("## Times\n\nMedian per call in µs over every round's timed calls, the slowest rank "
                + "per call, with the fastest and slowest call in brackets"
                + (compare ? ". Bus GB/s: nccl-tests' bus bandwidth of the median (1e9 bytes per second). Flat ÷ hierarchical: "
                + "flat NCCL's median ÷ the two levels' (above 1: the two levels are faster)."
                : SharedGpus.TIMES) + "\n\n");
        for (String op : rows.stream().map(Row::op).distinct().toList()) {
            List<Row> mine = rows.stream().filter(r -> r.op().equals(op)).toList();
            sb.append("### ").append(op).append("\n\nSize: ").append(sizeMeaning(op)).append('.');
            if (compare) {
                sb.append(' ').append(summary(mine));
            }
            sb.append("\n\n");
            MarkdownTable t = new MarkdownTable("size", "hierarchical µs", "flat NCCL µs", "hierarchical bus GB/s", "flat NCCL bus GB/s",
                    "flat ÷ hierarchical").without(!compare, "hierarchical bus GB/s", "flat NCCL bus GB/s", "flat ÷ hierarchical");
            for (Row r : mine) {
                t.row(Sizes.bytes(r.bytes()), time(r.hierarchical()), time(r.flat()), busBandwidth(r.hierarchical()), busBandwidth(r.flat()),
                        r.checkFailed() ? WRONG_OUTPUT : Sizes.ratio(r.ratio()));
            }
            sb.append(t.render()).append('\n');
        }
        return sb.toString();
    }

    /** "Flat ÷ hierarchical 0.97–1.02× over 4 size(s); the two levels faster at 2." */
    private static String summary(List<Row> rows) {
        List<Double> ratios = rows.stream().map(Row::ratio).filter(Double::isFinite).toList();
        if (ratios.isEmpty()) {
            return "No size has both implementations timed with a correct output.";
        }
        String lo = Sizes.ratio(ratios.stream().min(Comparator.naturalOrder()).orElseThrow());
        String hi = Sizes.ratio(ratios.stream().max(Comparator.naturalOrder()).orElseThrow());
        long faster = ratios.stream().filter(r -> r > 1).count();
        return "Flat ÷ hierarchical " + (lo.equals(hi) ? lo : lo.replace("×", "") + "–" + hi) + " over " + ratios.size()
                + " size(s); the two levels faster at " + faster + ".";
    }

    private String method() {
        return "## Method\n\n"
                + "- **Operations**: all-reduce (sum), all-gather, reduce-scatter (sum) and all-to-all over every rank of the job, "
                + "in the run's element type (`--dtype`, bf16 by default), at the sizes of `--sizes` (by default 1m, 16m, 64m and "
                + "256m), each size the one nccl-tests names the point by: all-gather its output per rank, reduce-scatter its "
                + "input per rank, the others the buffer per rank. Inputs uniform in [-1, 1), generated on the GPU from the seed, "
                + "one per rank and point, the same for both implementations.\n"
                + "- **Hierarchical** (`WorldCollectives`): all-reduce = node reduce-scatter on the heap → rail all-reduce of the "
                + "shards in NCCL → node all-gather on the heap (above 16 MiB in chunks whose three levels overlap on three "
                + "streams); all-gather = node all-gather on the heap into a node block → NCCL all-gather of the node blocks on the "
                + "rail; reduce-scatter = NCCL reduce-scatter on the rail → node reduce-scatter on the heap; all-to-all = the "
                + "blocks of the node's ranks on the heap, the others in one NCCL group of sends and receives. With one rank per "
                + "node there is no node level, and each call is NCCL's on the rail, which then holds every rank.\n"
                + "- **Flat NCCL**: one NCCL collective over every rank on the world communicator, what a user without the library "
                + "runs (all-to-all: one group of ncclSend/ncclRecv over every rank).\n"
                + "- **Timing**: CUDA events around each call, calls queued behind a gate so that no host launch time is inside, "
                + "an untimed device barrier of all ranks before each call. Per call the slowest rank counts. The two "
                + "implementations take turns in an order that changes every round. Bus bandwidth as nccl-tests computes it: "
                + "bytes ÷ time × 2(n−1)/n for all-reduce, × (n−1)/n for the others, n the ranks.\n"
                + "- **Check**, once per point before the timing: both implementations on the same input into poisoned outputs, "
                + "the hierarchical output against the flat one: bit for bit for all-gather and all-to-all; for the reductions "
                + "within the rounding of a few additions, at most 2 n² u per element (u the element type's unit roundoff: the "
                + "node level adds in float and rounds once per node, NCCL rounds each of its additions in its own order).\n"
                + "- **Nodes**: `bin/iris-bench nodes` simulates them on one host (`bin/iris-run --nnodes M --simulate-nodes -n N`: "
                + "a heap per simulated node, NCCL between them over loopback sockets). Such a run compares the two implementations "
                + "on that machine only and says nothing about a real network; [docs/multinode-cost-model.md](" + COST_MODEL
                + ") models a real cluster.\n"
                + "- **Shared GPUs**: where ranks share a GPU the run still checks the outputs and records the sharing; the times "
                + "then measure the ranks' turns on each GPU, and the report shows no ratio and no bus bandwidth.\n\n";
    }

    private String checks(List<Row> rows) {
        List<String> bad = rows.stream().flatMap(r -> r.impls().values().stream()
                .map(m -> CheckedPoints.failure(r.op() + " " + Sizes.bytes(r.bytes()) + " ", m))).filter(Objects::nonNull).toList();
        long points = rows.stream().mapToLong(r -> r.impls().size()).sum();
        boolean allChecked = rows.stream().allMatch(r -> r.hierarchical() != null && NodesMeasurement.OK.equals(r.hierarchical().check()));
        return outputChecks("Output check", bad, "All " + points + " point(s) ran" + (allChecked
                ? "; the hierarchical output matched flat NCCL's at every point (bit for bit for all-gather and all-to-all, within "
                + "the rounding of a few additions for the reductions)." : "; the hierarchical output was not checked at every point."));
    }

    /** What a point's size counts, as nccl-tests names it. */
    static String sizeMeaning(String op) {
        return switch (op) {
            case "all_reduce" -> "the buffer per rank (input = output)";
            case "all_gather" -> "the output per rank (ranks × input)";
            case "reduce_scatter" -> "the input per rank (ranks × output)";
            case "all_to_all" -> "the buffer per rank (input = output, one block per rank)";
            default -> "bytes per rank";
        };
    }

    private static String busBandwidth(NodesMeasurement m) {
        return timed(m) && m.busBandwidthGBs() > 0 ? Sizes.number(m.busBandwidthGBs()) : "—";
    }
}

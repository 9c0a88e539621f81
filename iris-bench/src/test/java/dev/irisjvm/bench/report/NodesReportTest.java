package dev.irisjvm.bench.report;

import static dev.irisjvm.bench.TextAssertions.assertContains;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.NodesMeasurement;
import dev.irisjvm.bench.results.NodesSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The nodes report from synthetic runs with known answers. All-reduce at 1 MiB: hierarchical
 * 100 µs, flat 120 µs → 1.20× (the two levels faster); at 16 MiB: 800 against 760 → 0.95×. On 2
 * ranks the all-reduce's bus factor is 1, so 1 MiB in 100 µs is 10.5 GB/s; on 4 ranks it is 1.5.
 * All-gather at 1 MiB: 50 against 50 → 1.00×. Then the same with ranks sharing GPUs, a wrong
 * hierarchical output, a flat point that did not run, real nodes, and no run at all.
 */
class NodesReportTest {
    static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    static NodesMeasurement point(String op, long bytes, int nodes, int ranksPerNode, String impl, double medianUs, String check) {
        int world = nodes * ranksPerNode;
        double bus = bytes / (medianUs * 1e3) * BusBandwidth.factor(op, world);
        return new NodesMeasurement(op, "bf16", bytes, nodes, ranksPerNode, impl, 40, medianUs, medianUs * 0.98, medianUs * 1.05,
                List.of(medianUs, medianUs * 1.01, medianUs * 0.99, medianUs), bus, check);
    }

    /** All-gather listed first and 16 MiB before 1 MiB: the report orders them itself. */
    static List<NodesMeasurement> points(int nodes, int ranksPerNode, String hierarchicalCheck) {
        return List.of(
                point("all_gather", MIB, nodes, ranksPerNode, NodesMeasurement.HIERARCHICAL, 50, NodesMeasurement.OK),
                point("all_gather", MIB, nodes, ranksPerNode, NodesMeasurement.FLAT, 50, NodesMeasurement.REFERENCE),
                point("all_reduce", 16 * MIB, nodes, ranksPerNode, NodesMeasurement.HIERARCHICAL, 800, NodesMeasurement.OK),
                point("all_reduce", 16 * MIB, nodes, ranksPerNode, NodesMeasurement.FLAT, 760, NodesMeasurement.REFERENCE),
                point("all_reduce", MIB, nodes, ranksPerNode, NodesMeasurement.HIERARCHICAL, 100, hierarchicalCheck),
                point("all_reduce", MIB, nodes, ranksPerNode, NodesMeasurement.FLAT, 120, NodesMeasurement.REFERENCE));
    }

    static NodesSweepResult run(int nodes, int ranksPerNode, boolean simulated, int maxRanksPerGpu, List<NodesMeasurement> ms) {
        return new NodesSweepResult("2026-12-04T10:00:00Z", "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)",
                "CUDA 13.0 (driver 13.0), NCCL 2.28.3, Java 17.0.15",
                "bin/iris-run --nnodes " + nodes + (simulated ? " --simulate-nodes" : "") + " -n " + ranksPerNode
                        + " -- java -cp ... dev.irisjvm.bench.nodes.NodesSweep --out /tmp/w/nodes-sweep.json",
                nodes * ranksPerNode, nodes, ranksPerNode, simulated, maxRanksPerGpu, 3, 10, 4, 24, ms);
    }

    /** Two simulated nodes of one rank each, one GPU per rank: the run the report is written for first. */
    static NodesSweepResult twoGpus(String hierarchicalCheck) {
        return run(2, 1, true, 1, points(2, 1, hierarchicalCheck));
    }

    /** The report of {@code run} as {@code iris-bench report nodes} writes it. */
    private String markdown(NodesSweepResult run, String name) throws IOException {
        return ReportRuns.reported(dir, ReportKind.NODES, name, run::write,
                "bin/iris-bench nodes --nodes " + run.nodes() + " -n " + run.ranksPerNode());
    }

    @Test
    void theKindAndItsFiles() {
        assertEquals(ReportKind.NODES, ReportKind.of("nodes"));
        assertEquals("nodes-sweep.json", ReportKind.NODES.sweepFile());
        assertEquals("nodes.md", ReportKind.NODES.markdown());
        assertEquals("nodes-findings.md", ReportKind.NODES.findingsFile());
        assertTrue(ReportKind.NODES.runOptional());
    }

    @Test
    void rowsByOperationThenSizeAndTheirRatios() {
        List<NodesDocument.Row> rows = new NodesDocument(twoGpus(NodesMeasurement.OK), Document.Context.of(BenchmarkTargets.builtIn())).rows();
        assertEquals(List.of("all_reduce 1048576", "all_reduce 16777216", "all_gather 1048576"),
                rows.stream().map(r -> r.op() + " " + r.bytes()).toList());
        assertEquals(1.2, rows.get(0).ratio(), 1e-12);
        assertEquals(0.95, rows.get(1).ratio(), 1e-12);
        assertEquals(1.0, rows.get(2).ratio(), 1e-12);

        List<NodesDocument.Row> wrong = new NodesDocument(twoGpus("rank 1: element 3 is 0.5, flat NCCL's 1.5"), Document.Context.of(BenchmarkTargets.builtIn()))
                .rows();
        assertTrue(Double.isNaN(wrong.get(0).ratio()), "a wrong output has no ratio, however fast");
        assertTrue(wrong.get(0).checkFailed());
    }

    @Test
    void oneGpuPerRankOnSimulatedNodes() throws IOException {
        String md = markdown(twoGpus(NodesMeasurement.OK), "simulated");
        assertTrue(md.startsWith("# " + NodesDocument.TITLE + "\n"), md);
        assertContains(md,
                "- **ranks**: 2 = 2 nodes × 1 rank(s) per node, one GPU each\n",
                "- **nodes**: simulated on one host (`bin/iris-run --simulate-nodes`): NCCL between them over "
                        + "loopback sockets\n",
                "- **operations**: all_reduce, all_gather; bf16; seed 24\n",
                "- **timing**: 3 warm-up and 10 timed calls per implementation, point and round, 4 round(s)\n",
                "bin/iris-bench nodes --nodes 2 -n 1\n# which ran:\nbin/iris-run --nnodes 2 --simulate-nodes -n 1 -- "
                        + "java",
                "[nodes-sweep.json](nodes-sweep.json)");
        // Before any figure: the network was loopback, and with one rank per node there is no node level.
        int note = md.indexOf(NodesDocument.SIMULATED_NOTE);
        assertTrue(note > 0 && note < md.indexOf("## Times"), md);
        assertTrue(md.contains("[docs/multinode-cost-model.md](../multinode-cost-model.md)"), md);
        assertTrue(md.contains(NodesDocument.ONE_RANK_PER_NODE_NOTE), md);

        assertTrue(md.contains("### all_reduce\n\nSize: the buffer per rank (input = output). Flat ÷ hierarchical 0.95–1.20× over 2 "
                + "size(s); the two levels faster at 1.\n"), md);
        assertTrue(md.contains("| size | hierarchical µs | flat NCCL µs | hierarchical bus GB/s | flat NCCL bus GB/s | "
                + "flat ÷ hierarchical |"), md);
        // 1 MiB in 100 µs: 10.5 GB/s; in 120 µs: 8.74. 16 MiB in 800 µs: 21.0; in 760 µs: 22.1.
        assertContains(md,
                "| 1 MiB | 100 [98.0–105] | 120 [118–126] | 10.5 | 8.74 | 1.20× |",
                "| 16 MiB | 800 [784–840] | 760 [745–798] | 21.0 | 22.1 | 0.95× |",
                "### all_gather\n\nSize: the output per rank (ranks × input). "
                        + "Flat ÷ hierarchical 1.00× over 1 size(s); the two levels faster at 0.\n");
        assertFalse(md.contains("### reduce_scatter") || md.contains("### all_to_all"), "operations the run did not time get no section");
        assertTrue(md.indexOf("### all_reduce") < md.indexOf("### all_gather"), md);

        assertTrue(md.contains("## Method"), md);
        assertTrue(md.contains("node reduce-scatter on the heap → rail all-reduce of the shards in NCCL → node all-gather on the heap"),
                md);
        assertTrue(md.contains("## Output check\n\nAll 6 point(s) ran; the hierarchical output matched flat NCCL's at every point "
                + "(bit for bit for all-gather and all-to-all"), md);
        assertFalse(md.contains("## Target") || md.contains("pass") || md.contains("FAIL"), "no target, no verdict:\n" + md);
    }

    @Test
    void realNodesOfTwoRanksHaveNoLoopbackNote() throws IOException {
        String md = markdown(run(2, 2, false, 1, points(2, 2, NodesMeasurement.OK)), "real");
        assertContains(md,
                "- **ranks**: 4 = 2 nodes × 2 rank(s) per node, one GPU each\n",
                "- **nodes**: separate hosts\n",
                "# which ran:\nbin/iris-run --nnodes 2 -n 2 -- java");
        assertFalse(md.contains("Simulated nodes: these figures say nothing"), md);
        assertFalse(md.contains(NodesDocument.ONE_RANK_PER_NODE_NOTE), md);
        // On 4 ranks the all-reduce's bus factor is 2 (4 - 1) / 4 = 1.5: 10.5 GB/s of algorithm bandwidth is 15.7 of bus.
        assertTrue(md.contains("| 1 MiB | 100 [98.0–105] | 120 [118–126] | 15.7 | 13.1 | 1.20× |"), md);
    }

    @Test
    void sharedGpusShowNoRatioAndNoBandwidth() throws IOException {
        String md = markdown(run(2, 1, true, 2, points(2, 1, NodesMeasurement.OK)), "shared");
        assertContains(md,
                "- **ranks**: 2 = 2 nodes × 1 rank(s) per node, sharing GPUs (up to 2 per GPU): nothing is compared",
                "> **Ranks shared GPUs** (up to 2 per GPU)",
                NodesDocument.SIMULATED_NOTE,
                "these times include the ranks' turns on each GPU and compare nothing",
                "| size | hierarchical µs | flat NCCL µs |\n",
                "| 1 MiB | 100 [98.0–105] | 120 [118–126] |\n");
        assertFalse(md.contains("bus GB/s |") || md.contains("| flat ÷ hierarchical |") || md.contains("Flat ÷ hierarchical 0"), md);
        assertFalse(md.matches("(?s).*\\d\\.\\d\\d×.*"), "no ratio anywhere:\n" + md);
        assertTrue(md.contains("All 6 point(s) ran; the hierarchical output matched"), md);
    }

    @Test
    void aWrongOutputHasNoRatioAndIsSaidFirst() throws IOException {
        String why = "rank 1: element 3 is 0.5, flat NCCL's 1.5 (allowed difference 0.03125)";
        String md = markdown(twoGpus(why), "wrong");
        int note = md.indexOf("> **Output check failed** at 1 point(s)");
        assertTrue(note > 0 && note < md.indexOf("## Times"), md);
        assertContains(md,
                "| 1 MiB | 100 [98.0–105] | 120 [118–126] | 10.5 | 8.74 | " + NodesDocument.WRONG_OUTPUT + " |",
                "Flat ÷ hierarchical 0.95× over 1 size(s); the two levels faster at 0.",
                "## Output check\n\n- all_reduce 1 MiB hierarchical: " + why + "\n");
    }

    @Test
    void aPointThatDidNotRun() throws IOException {
        List<NodesMeasurement> ms = new ArrayList<>(points(2, 1, NodesMeasurement.OK));
        ms.set(3, NodesMeasurement.failed("all_reduce", "bf16", 16 * MIB, 2, 1, NodesMeasurement.FLAT, "NCCL: unhandled system error"));
        String md = markdown(run(2, 1, true, 1, ms), "unrun");
        assertContains(md,
                "| 16 MiB | 800 [784–840] | not run | 21.0 | — | — |",
                "Flat ÷ hierarchical 1.20× over 1 size(s); the two levels faster at 1.",
                "## Output check\n\n- all_reduce 16 MiB flat_nccl: not run: NCCL: unhandled system error\n");
        assertFalse(md.contains("Output check failed"), "a point that did not run is not a wrong output:\n" + md);
    }

    @Test
    void withoutARunTheComparisonIsPending() throws IOException {
        Path out = dir.resolve("pending");
        String md = ReportRuns.pending(out, ReportKind.NODES, NodesDocument.COMMAND, "Loopback says nothing about a network.\n");
        assertTrue(md.startsWith("# " + NodesDocument.TITLE + "\n"), md);
        assertTrue(md.contains(NodesDocument.PENDING), md);
        assertTrue(md.contains("one GPU per rank, i.e. on a machine with as many GPUs as ranks"), md);
        assertEquals("bin/iris-bench nodes --nodes 2 -n 1 --out docs/benchmarks", NodesDocument.COMMAND);
        assertTrue(md.contains("says nothing about a real network; [docs/multinode-cost-model.md](../multinode-cost-model.md)"), md);
        assertFalse(md.contains("## Times") || md.contains("## Target") || md.contains("| 1 MiB") || md.contains("GB/s |"), md);
    }

    @Test
    void jsonRoundTrip() throws IOException {
        NodesSweepResult run = run(2, 1, true, 2, points(2, 1, NodesMeasurement.OK));
        assertTrue(run.sharedGpu());
        String json = ReportRuns.roundTrip(dir, run, run::write, f -> StoredResult.read(f, NodesSweepResult.class));
        assertFalse(json.contains("\"sharedGpu\"") || json.contains("\"timed\"") || json.contains("\"checkFailed\""),
                "derived facts are not stored:\n" + json);
    }
}

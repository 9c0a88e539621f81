package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code iris-bench nodes}: world collectives on nodes simulated on this host, two levels
 * (WorldCollectives) against flat NCCL, then nodes.md. The ranks start through
 * {@code bin/iris-run --nnodes M --simulate-nodes -n N}.
 */
@Command(name = "nodes", mixinStandardHelpOptions = true,
        description = {"World collectives (all-reduce, all-gather, reduce-scatter, all-to-all) over every rank of a job of several "
                + "nodes, simulated on this host: WorldCollectives in two levels (the node on the symmetric heap, the rail in NCCL) "
                + "against one flat NCCL collective over every rank, same run, outputs compared; then nodes.md and the raw JSON. "
                + "NCCL between simulated nodes goes over loopback sockets, which says nothing about a real network "
                + "(docs/multinode-cost-model.md models one). Timings need one GPU per rank (--nodes x -n GPUs); with fewer, "
                + "the ranks share GPUs, the outputs are still checked and nothing is compared. "
                + "Sweep options: dev.irisjvm.bench.nodes.NodesSweep --help.",
                "--quick: --sizes " + NodesRun.QUICK_SIZES + ", 2 rounds."})
final class NodesRun extends BenchRun {
    static final String QUICK_SIZES = "1m,16m";

    @Option(names = "--nodes", paramLabel = "M", defaultValue = "2",
            description = "nodes to simulate on this host, at least 2 (default: ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = {"-n", "--ranks-per-node"}, paramLabel = "N", defaultValue = "1",
            description = "ranks on each simulated node (default: ${DEFAULT-VALUE}); 2 or more bring in the node level on the heap")
    int ranksPerNode;

    NodesRun() {
        super(ReportKind.NODES, "dev.irisjvm.bench.nodes.NodesSweep", List.of("--sizes", QUICK_SIZES, "--rounds", "2"));
    }

    /** The ranks of each node; the launcher starts {@code nodes} of them. */
    @Override
    int ranks() {
        if (nodes < 2) {
            throw new IllegalArgumentException("--nodes " + nodes + ": needs 2 or more nodes to simulate (on one node the world "
                    + "collectives are the node's own, which iris-bench ccl measures)");
        }
        if (ranksPerNode < 1) {
            throw new IllegalArgumentException("-n " + ranksPerNode + ": needs 1 or more ranks per node");
        }
        if ((long) nodes * ranksPerNode > RankCount.NODE_GPUS) {
            throw new IllegalArgumentException("--nodes " + nodes + " x -n " + ranksPerNode + " = " + nodes * ranksPerNode
                    + " ranks: the simulated nodes share this host, at most " + RankCount.NODE_GPUS + " ranks");
        }
        return ranksPerNode;
    }

    @Override
    List<String> launchOptions() {
        return List.of("--nnodes", Integer.toString(nodes), "--simulate-nodes");
    }
}

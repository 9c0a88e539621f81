package dev.irisjvm.bench.nodes;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.ccl.CclOp;
import dev.irisjvm.bench.results.NodesMeasurement;
import dev.irisjvm.bench.results.NodesSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.ccl.WorldCollectives;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The nodes benchmark (issue 24): the world collectives of a job of several nodes in two levels
 * ({@link WorldCollectives}: inside each node on the symmetric heap, between nodes in NCCL on the
 * rail) against one flat NCCL collective over every rank, on the same inputs, timed with CUDA events
 * in the same run on every rank ({@link NodesBench}), outputs compared first. Rank 0 writes one
 * {@link NodesSweepResult}. On one machine the launcher simulates the nodes (NCCL between them over
 * loopback sockets, which says nothing about a real network; docs/multinode-cost-model.md models a
 * real cluster):
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run --nnodes 2 --simulate-nodes -n 1 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.nodes.NodesSweep
 * bin/iris-run --nnodes 2 --simulate-nodes -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.nodes.NodesSweep --sizes 1m,16m
 * </pre>
 *
 * Where ranks share a GPU the benchmark still runs and checks, and records it: the report then
 * compares nothing. Exit code: 0; 2 for bad options; 3 if an output failed its check.
 */
@Command(name = "NodesSweep", mixinStandardHelpOptions = true,
        description = "World collectives across nodes, two levels against flat NCCL, with CUDA events on every rank.")
public final class NodesSweep extends SweepCommand {
    @Mixin
    NodesOptions options = new NodesOptions();

    public static void main(String[] args) {
        main(new NodesSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        return sweep(options::validate, () -> config(options.rounds().job()), this::measure);
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        RoundsOptions timing = options.rounds();
        List<NodesMeasurement> results;
        try (WorldCollectives collectives = WorldCollectives.create(iris)) {
            int ranksPerNode = iris.node().size();
            int nodes = iris.worldSize() / ranksPerNode;
            if (nodes < 2) {
                throw new IllegalStateException("run on at least two nodes (world " + iris.worldSize() + ", node " + ranksPerNode
                        + "), e.g. bin/iris-run --nnodes 2 --simulate-nodes -n 1 -- java ... " + NodesSweep.class.getName());
            }
            NcclTeams nccl = NcclTeams.of(iris);
            String hardware = RunRecord.hardware(iris);
            String software = RunRecord.software(nccl.version());
            boolean simulated = oneHost(iris);
            int perGpu = iris.maxRanksPerGpu();
            sayRun(iris, nodes + " nodes x " + ranksPerNode + " ranks" + (simulated ? " simulated on one host "
                    + "(NCCL between the nodes over loopback sockets: says nothing about a real network)" : ""), hardware, software,
                    timing.seed());
            sayIfGpusShared(iris, perGpu);
            try (NodesBench bench = new NodesBench(iris, options, collectives, nccl.world(), kernels)) {
                for (CclOp op : options.ops()) {
                    runEach(iris, options.sizes(), bytes -> op.id() + " " + SizeList.format(bytes), bytes -> bench.run(op, bytes));
                }
                results = bench.measurements();
            } finally {
                iris.synchronize();
            }
            NodesSweepResult sweep = new NodesSweepResult(RunRecord.now(), hardware, software, command(nodes, ranksPerNode, simulated),
                    iris.worldSize(), nodes, ranksPerNode, simulated, perGpu, timing.warmup(), timing.reps(), timing.rounds(),
                    timing.seed(), results);
            write(iris, options.out.path(), sweep::write, results.size() + " measurements");
        }
        return checked(results.stream().filter(NodesMeasurement::checkFailed).count(), "point(s) failed their check");
    }

    /** The launcher's command of this run (on real nodes, each node's launcher also names its --node-rank and --master-addr). */
    private String command(int nodes, int ranksPerNode, boolean simulated) {
        return "bin/iris-run --nnodes " + nodes + (simulated ? " --simulate-nodes" : "") + " -n " + ranksPerNode + " -- "
                + RunRecord.command(0, NodesSweep.class, spec);
    }

    /** Collective: whether every rank runs on the same host, so that its nodes are simulated. */
    private static boolean oneHost(Iris iris) {
        String mine;
        try {
            mine = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            mine = "unknown host of rank " + iris.rank();
        }
        byte[][] all = iris.allGather(mine.getBytes(StandardCharsets.UTF_8));
        return Arrays.stream(all).allMatch(h -> Arrays.equals(h, all[0]));
    }
}

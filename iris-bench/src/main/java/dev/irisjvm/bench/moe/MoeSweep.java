package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.MoeMeasurement;
import dev.irisjvm.bench.results.MoeSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The MoE sweep: for every case (DeepSeek-V3's and Mixtral's layer at T tokens per rank), the
 * library's dispatch, combine and both (and the low-latency mode for small T) against NCCL
 * all-to-all-v moving the same rows, all timed with CUDA events in the same run on every rank
 * (see {@link MoeBench}). Rank 0 writes one {@link MoeSweepResult}. One process per GPU, one node:
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.moe.MoeSweep --out /tmp/m/moe-sweep.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.moe.MoeSweep --models mixtral --tokens 128,16384
 * </pre>
 *
 * Where ranks share a GPU the sweep still runs and checks, and records it: the report then
 * compares nothing (the times measure the ranks' turns on the GPU). Exit code: 0; 2 for bad
 * options; 3 if an output failed its check.
 */
@Command(name = "MoeSweep", mixinStandardHelpOptions = true,
        description = "MoE dispatch and combine against NCCL all-to-all-v, with CUDA events, on every rank.")
public final class MoeSweep extends SweepCommand {
    @Mixin
    MoeOptions options = new MoeOptions();

    public static void main(String[] args) {
        main(new MoeSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(options.heapBytes())
                .withDeviceTimeout(Duration.ofMillis(options.deviceTimeoutMs()));
        List<MoeMeasurement> results;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library)) {
            requireTwoRanks(iris);
            if (iris.node().size() != iris.worldSize()) {
                throw new IllegalStateException("MoeDispatch exchanges within a node: run every rank on one node (world "
                        + iris.worldSize() + ", node " + iris.node().size() + ")");
            }
            String hardware = RunRecord.hardware(iris);
            NcclTeams nccl = NcclTeams.of(iris);
            String software = RunRecord.software(nccl.version());
            int perGpu = iris.maxRanksPerGpu();
            if (iris.rank() == 0) {
                System.out.println("MoeSweep: " + iris.worldSize() + " ranks, " + hardware + ", " + software + ", heap "
                        + SizeList.format(config.heapSize()) + " per rank, seed " + options.seed());
                if (perGpu > 1) {
                    System.out.println("MoeSweep: the ranks share GPUs (up to " + perGpu + " per GPU): the outputs are checked, "
                            + "but the times measure the ranks' turns on each GPU and the report compares nothing");
                }
            }
            try (MoeBench bench = new MoeBench(iris, options, nccl.world(), kernels)) {
                for (MoeCase c : options.cases()) {
                    long start = System.nanoTime();
                    bench.run(c);
                    if (iris.rank() == 0) {
                        System.out.printf(Locale.ROOT, "MoeSweep: %s done in %.1f s%n", c, (System.nanoTime() - start) / 1e9);
                    }
                }
                results = bench.measurements();
            } finally {
                iris.synchronize();
            }
            if (iris.rank() == 0) {
                MoeSweepResult sweep = new MoeSweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), hardware, software,
                        RunRecord.command(iris.worldSize(), MoeSweep.class, spec), iris.worldSize(), perGpu, options.warmup(),
                        options.reps(), options.rounds(), options.seed(), results);
                RunRecord.write(options.out(), sweep::write);
                System.out.println("MoeSweep: " + results.size() + " measurements written to " + options.out().toAbsolutePath());
            }
        }
        return checked(results.stream().filter(MoeMeasurement::checkFailed).count(), "point(s) failed their check");
    }
}

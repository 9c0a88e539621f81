package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.MoeMeasurement;
import dev.irisjvm.bench.results.MoeSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.util.List;
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
        return sweep(options::validate, () -> config(options.rounds().job()), this::measure);
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        if (!options.layerOnly()) {
            requireTwoRanks(iris);
        }
        if (iris.node().size() != iris.worldSize()) {
            throw new IllegalStateException("MoeDispatch exchanges within a node: run every rank on one node (world "
                    + iris.worldSize() + ", node " + iris.node().size() + ")");
        }
        RoundsOptions timing = options.rounds();
        String hardware = RunRecord.hardware(iris);
        NcclTeams nccl = NcclTeams.of(iris);
        String software = RunRecord.software(nccl.version());
        int perGpu = iris.maxRanksPerGpu();
        sayRun(iris, iris.worldSize() + " ranks", hardware, software, timing.seed());
        sayIfGpusShared(iris, perGpu);
        List<MoeMeasurement> results;
        try (MoeBench bench = new MoeBench(iris, options, nccl.world(), kernels)) {
            runEach(iris, options.cases(), Object::toString, bench::run);
            results = bench.measurements();
        } finally {
            iris.synchronize();
        }
        MoeSweepResult sweep = new MoeSweepResult(RunRecord.now(), hardware, software,
                RunRecord.command(iris.worldSize(), MoeSweep.class, spec), iris.worldSize(), perGpu, timing.warmup(), timing.reps(),
                timing.rounds(), timing.seed(), results);
        write(iris, options.out.path(), sweep::write, results.size() + " measurements");
        return checked(results.stream().filter(MoeMeasurement::checkFailed).count(), "point(s) failed their check");
    }
}

package dev.irisjvm.bench.step;

import dev.irisjvm.bench.EveryRankCublas;
import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.StepMeasurement;
import dev.irisjvm.bench.results.StepSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.examples.Example11TrainingStep;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The training-step benchmark (issue 25): forward + backward of a tensor-parallel, sequence-parallel
 * MLP with the library's fused operations against the same step with cuBLAS then NCCL, and each
 * part of the baseline alone, timed with CUDA events in the same run on every rank ({@link
 * StepBench}); then both steps once more from the same inputs, their outputs compared. Rank 0
 * writes one {@link StepSweepResult}. One process per GPU, one node:
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.step.StepSweep --out /tmp/s/training-step.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.step.StepSweep --shape 2048x2048x8192 --rounds 2
 * </pre>
 *
 * Where ranks share a GPU the benchmark still runs and checks, and records it: the report then
 * compares nothing (the times measure the ranks' turns on the GPU). Exit code: 0; 2 for bad
 * options; 3 if the fused step's outputs failed their check.
 */
@Command(name = "StepSweep", mixinStandardHelpOptions = true,
        description = "A tensor-parallel MLP's training step, fused operations against cuBLAS then NCCL, with CUDA events on every rank.")
public final class StepSweep extends SweepCommand {
    @Mixin
    StepOptions options = new StepOptions();

    public static void main(String[] args) {
        main(new StepSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        return sweep(options::validate, () -> config(options.rounds().job()), this::measure);
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        RoundsOptions timing = options.rounds();
        StepShape shape = options.shape();
        List<StepMeasurement> results;
        try (Gemm gemm = Gemm.create();
             DeviceModule elementwise = KernelCompiler.forIris(iris)
                     .compileResource(Example11TrainingStep.class, "11_training_step.cu").load()) {
            requireTwoRanks(iris);
            String hardware = RunRecord.hardware(iris);
            int perGpu = iris.maxRanksPerGpu();
            CublasGemm cublas = EveryRankCublas.open(iris, why -> {
                throw new IllegalStateException("the baseline needs cuBLAS: " + why);
            });
            NcclComm nccl = NcclComm.open(iris);
            try {
                if (!nccl.available()) {
                    throw new IllegalStateException("the baseline needs NCCL: " + nccl.reason());
                }
                String software = RunRecord.software(cublas.version() + ", " + nccl.version());
                sayRun(iris, shape + " on " + iris.worldSize() + " ranks (TP " + iris.worldSize() + ")", hardware, software,
                        timing.seed());
                sayIfGpusShared(iris, perGpu);
                try (StepBench bench = new StepBench(iris, options, gemm, cublas, nccl, kernels)) {
                    runEach(iris, List.of(shape), Object::toString, s -> bench.run(s, elementwise));
                    results = bench.measurements();
                }
                StepSweepResult sweep = new StepSweepResult(RunRecord.now(), hardware, software,
                        RunRecord.command(iris.worldSize(), StepSweep.class, spec), iris.worldSize(), perGpu, timing.warmup(),
                        timing.reps(), timing.rounds(), timing.seed(), results);
                write(iris, options.out.path(), sweep::write, results.size() + " measurements");
            } finally {
                synchronizeThenClose(iris, nccl, cublas);
            }
        }
        return checked(results.stream().filter(StepMeasurement::checkFailed).count(), "point(s) failed their check");
    }
}

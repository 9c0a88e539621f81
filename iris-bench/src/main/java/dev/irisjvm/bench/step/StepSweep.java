package dev.irisjvm.bench.step;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.StepMeasurement;
import dev.irisjvm.bench.results.StepSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.examples.Example11TrainingStep;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ccl.NcclComm;
import dev.irisjvm.kernels.gemm.CublasGemm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
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
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        RoundsOptions timing = options.rounds();
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(timing.heapBytes())
                .withDeviceTimeout(Duration.ofMillis(timing.deviceTimeoutMs()));
        StepShape shape = options.shape();
        List<StepMeasurement> results;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library); Gemm gemm = Gemm.create();
             DeviceModule elementwise = KernelCompiler.forIris(iris)
                     .compileResource(Example11TrainingStep.class, "11_training_step.cu").load()) {
            requireTwoRanks(iris);
            String hardware = RunRecord.hardware(iris);
            int perGpu = iris.maxRanksPerGpu();
            CublasGemm cublas = openCublas(iris);
            NcclComm nccl = NcclComm.open(iris);
            try {
                if (!nccl.available()) {
                    throw new IllegalStateException("the baseline needs NCCL: " + nccl.reason());
                }
                String software = RunRecord.software(cublas.version() + ", " + nccl.version());
                if (iris.rank() == 0) {
                    System.out.println("StepSweep: " + shape + " on " + iris.worldSize() + " ranks (TP " + iris.worldSize() + "), "
                            + hardware + ", " + software + ", heap " + SizeList.format(config.heapSize()) + " per rank, seed "
                            + timing.seed());
                    if (perGpu > 1) {
                        System.out.println("StepSweep: the ranks share GPUs (up to " + perGpu + " per GPU): the outputs are checked, "
                                + "but the times measure the ranks' turns on each GPU and the report compares nothing");
                    }
                }
                try (StepBench bench = new StepBench(iris, options, gemm, cublas, nccl, kernels)) {
                    long start = System.nanoTime();
                    bench.run(shape, elementwise);
                    results = bench.measurements();
                    if (iris.rank() == 0) {
                        System.out.printf(Locale.ROOT, "StepSweep: %s done in %.1f s%n", shape, (System.nanoTime() - start) / 1e9);
                    }
                }
                if (iris.rank() == 0) {
                    StepSweepResult sweep = new StepSweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), hardware,
                            software, RunRecord.command(iris.worldSize(), StepSweep.class, spec), iris.worldSize(), perGpu,
                            timing.warmup(), timing.reps(), timing.rounds(), timing.seed(), results);
                    RunRecord.write(options.out(), sweep::write);
                    System.out.println("StepSweep: " + results.size() + " measurements written to " + options.out().toAbsolutePath());
                }
            } finally {
                try {
                    iris.synchronize();
                } finally {
                    try {
                        nccl.close();
                    } finally {
                        cublas.close();
                    }
                }
            }
        }
        return checked(results.stream().filter(StepMeasurement::checkFailed).count(), "point(s) failed their check");
    }

    /** cuBLAS on every rank, or an exception on every rank naming the first rank that could not open it. */
    private static CublasGemm openCublas(Iris iris) {
        CublasGemm cublas = null;
        String mine = null;
        try {
            cublas = CublasGemm.open(iris.stream());
        } catch (RuntimeException | LinkageError e) {
            mine = String.valueOf(e.getMessage());
        }
        String why = NcclComm.firstReason(iris, mine);
        if (why != null) {
            if (cublas != null) cublas.close();
            throw new IllegalStateException("the baseline needs cuBLAS: " + why);
        }
        return cublas;
    }
}

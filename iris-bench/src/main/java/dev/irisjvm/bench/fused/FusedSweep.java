package dev.irisjvm.bench.fused;

import dev.irisjvm.bench.EveryRankCublas;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.nio.file.Files;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The fused sweep: for every operation and global shape of issue 9, the fused GEMM + communication
 * kernels (every variant) against cuBLAS then NCCL in sequence, plus the GEMM alone (the floor),
 * the Iris GEMM alone and the collective alone, all timed with CUDA events in the same run on every
 * rank (see {@link FusedBench}); one traced call per operation and variant written as a Chrome
 * trace. Rank 0 writes one {@link FusedSweepResult}. One process per GPU:
 *
 * <pre>
 * mvn -q install -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --out /tmp/f/fused-sweep.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --shapes all_reduce:4096x4096x4096 --reps 50
 * </pre>
 *
 * Exit code: 0; 2 for bad options; 3 if a fused output failed its check against the baseline.
 */
@Command(name = "FusedSweep", mixinStandardHelpOptions = true,
        description = "Fused GEMM + communication kernels against cuBLAS then NCCL, with CUDA events, on every rank.")
public final class FusedSweep extends SweepCommand {
    @Mixin
    FusedOptions options = new FusedOptions();

    public static void main(String[] args) {
        main(new FusedSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        return sweep(options::validate, () -> config(options.job()), this::measure);
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        List<FusedMeasurement> results;
        try (Gemm gemm = Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM()))) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            requireTwoRanks(iris);
            long runSeed = runSeed(iris, options.seed());
            options.seed = runSeed;
            String hardware = RunRecord.hardware(iris);
            CublasGemm cublas = options.baseline()
                    ? EveryRankCublas.open(iris, why -> say(iris, "cuBLAS unavailable on " + why + "; no baseline")) : null;
            NcclComm nccl = options.baseline() ? NcclComm.open(iris) : NcclComm.disabled(iris, "--no-baseline");
            String software = RunRecord.software((cublas != null ? cublas.version() : "cuBLAS not used") + ", "
                    + (nccl.available() ? nccl.version() : "NCCL not used (" + nccl.reason() + ")"));
            if (iris.rank() == 0) {
                Files.createDirectories(options.traces());
            }
            sayRun(iris, iris.worldSize() + " ranks (TP " + iris.worldSize() + ")", hardware, software, runSeed);
            List<FusedSweepResult.Trace> traces;
            try (FusedBench bench = new FusedBench(iris, options, gemm, cublas, nccl, kernels, runSeed)) {
                runEach(iris, options.shapes(), Object::toString, bench::run);
                results = bench.measurements();
                traces = bench.traces();
            } finally {
                synchronizeThenClose(iris, nccl, cublas);
            }
            FusedSweepResult sweep = new FusedSweepResult(RunRecord.now(), hardware, software,
                    RunRecord.command(iris.worldSize(), FusedSweep.class, spec), iris.worldSize(), options.warmup(), options.reps(),
                    options.groupM(), results, traces);
            write(iris, options.out(), sweep::write, results.size() + " measurements, " + traces.size() + " traces");
        }
        return checked(results.stream().filter(m -> FusedMeasurement.FUSED.equals(m.impl()) && m.checkFailed()).count(),
                "fused point(s) failed their check");
    }
}

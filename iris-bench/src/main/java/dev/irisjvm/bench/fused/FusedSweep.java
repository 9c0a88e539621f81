package dev.irisjvm.bench.fused;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ccl.NcclComm;
import dev.irisjvm.kernels.gemm.CublasGemm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
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
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(options.heapBytes())
                .withDeviceTimeout(Duration.ofMillis(options.deviceTimeoutMs()));
        List<FusedMeasurement> results;
        List<FusedSweepResult.Trace> traces;
        String software;
        String hardware;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library);
             Gemm gemm = Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM()))) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            requireTwoRanks(iris);
            long runSeed = runSeed(iris, options.seed());
            options.seed = runSeed;
            hardware = RunRecord.hardware(iris);
            CublasGemm cublas = options.baseline() ? openCublas(iris) : null;
            NcclComm nccl = options.baseline() ? NcclComm.open(iris) : NcclComm.disabled(iris, "--no-baseline");
            software = RunRecord.software((cublas != null ? cublas.version() : "cuBLAS not used") + ", "
                    + (nccl.available() ? nccl.version() : "NCCL not used (" + nccl.reason() + ")"));
            if (iris.rank() == 0) {
                Files.createDirectories(options.traces());
                System.out.println("FusedSweep: " + iris.worldSize() + " ranks (TP " + iris.worldSize() + "), " + hardware + ", "
                        + software + ", heap " + SizeList.format(config.heapSize()) + " per rank, seed " + runSeed);
            }
            try (FusedBench bench = new FusedBench(iris, options, gemm, cublas, nccl, kernels, runSeed)) {
                int index = 0;
                for (FusedShape s : options.shapes()) {
                    long start = System.nanoTime();
                    bench.run(s, index++);
                    if (iris.rank() == 0) {
                        System.out.printf(Locale.ROOT, "FusedSweep: %s done in %.1f s%n", s, (System.nanoTime() - start) / 1e9);
                    }
                }
                results = bench.measurements();
                traces = bench.traces();
            } finally {
                try {
                    iris.synchronize();
                } finally {
                    try {
                        nccl.close();
                    } finally {
                        if (cublas != null) cublas.close();
                    }
                }
            }
            if (iris.rank() == 0) {
                FusedSweepResult sweep = new FusedSweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), hardware,
                        software, RunRecord.command(iris.worldSize(), FusedSweep.class, spec), iris.worldSize(), options.warmup(), options.reps(),
                        options.groupM(), results, traces);
                RunRecord.write(options.out(), sweep::write);
                System.out.println("FusedSweep: " + results.size() + " measurements, " + traces.size() + " traces written to "
                        + options.out().toAbsolutePath());
            }
        }
        return checked(results.stream().filter(m -> FusedMeasurement.FUSED.equals(m.impl()) && m.checkFailed()).count(),
                "fused point(s) failed their check");
    }

    /** cuBLAS on every rank, or on none (every rank learns why). */
    private static CublasGemm openCublas(Iris iris) {
        CublasGemm cublas = null;
        String why = null;
        try {
            cublas = CublasGemm.open(iris.stream());
        } catch (RuntimeException | LinkageError e) {
            why = String.valueOf(e.getMessage());
        }
        byte[][] all = iris.allGather(why == null ? new byte[0] : why.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) {
                if (iris.rank() == 0) {
                    System.out.println("FusedSweep: cuBLAS unavailable on rank " + r + ": " + new String(all[r], StandardCharsets.UTF_8)
                            + "; no baseline");
                }
                if (cublas != null) cublas.close();
                return null;
            }
        }
        return cublas;
    }
}

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
import dev.irisjvm.kernels.baselines.CublasLtGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.gemm.Gemm;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The fused sweep: for every operation and global shape of issue 9 (or issue 26's small M), the
 * fused GEMM + communication kernels (every variant) against cuBLAS then NCCL in sequence and
 * cuBLAS then the library's own collective, plus the GEMM alone (cublasGemmEx and cuBLASLt: the
 * floor), the Iris GEMM alone and each collective alone, all timed with CUDA events in the same run
 * on every rank (see {@link FusedBench}); one traced call per operation and variant written as a
 * Chrome trace. Rank 0 writes one {@link FusedSweepResult}. One process per GPU; with
 * {@code --check-only}, ranks may share one, and only the checks are printed. On one rank the
 * collectives move nothing, and the sweep times the fused kernels' GEMM part (the single-GPU part of
 * the small-M table):
 *
 * <pre>
 * mvn -q install -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --out /tmp/f/fused-sweep.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --shapes all_reduce:4096x4096x4096 --reps 50
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --small-m --check-only
 * bin/iris-run -n 1 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.fused.FusedSweep --small-m --no-trace
 * </pre>
 *
 * Exit code: 0; 2 for bad options; 3 if an output failed its check (a fused kernel's, cuBLAS then the
 * library's collective and cuBLAS then NCCL on its windows against cuBLAS then NCCL, cuBLASLt's product
 * against cublasGemmEx's).
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
        try (Gemm gemm = Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM))) {
            if (!options.checkOnly && SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            if (iris.worldSize() == 1) {
                say(iris, "one rank: the collectives move nothing; this times the fused kernels' GEMM part against the GEMM alone");
            }
            long runSeed = runSeed(iris, options.seed);
            String hardware = RunRecord.hardware(iris);
            CublasGemm cublas = options.baseline()
                    ? EveryRankCublas.open(iris, why -> say(iris, "cuBLAS unavailable on " + why + "; no baseline")) : null;
            CublasLtGemm cublasLt = cublas != null && options.cublasLt() ? EveryRankCublas.openLt(iris,
                    CublasLtGemm.DEFAULT_WORKSPACE_BYTES, why -> say(iris, "cuBLASLt unavailable on " + why + "; cublasGemmEx only"))
                    : null;
            NcclComm nccl = options.baseline() ? NcclComm.open(iris) : NcclComm.disabled(iris, "--no-baseline");
            NcclWindows windows = openWindows(iris, nccl);
            Collectives ccl = Collectives.create(iris);
            String software = RunRecord.software((cublas != null ? cublas.version() : "cuBLAS not used") + ", "
                    + (cublasLt != null ? cublasLt.version() + " (" + (cublasLt.workspaceBytes() >> 20) + " MiB workspace)"
                    : "cuBLASLt not used") + ", " + (nccl.available() ? nccl.version() : "NCCL not used (" + nccl.reason() + ")"));
            if (iris.rank() == 0 && options.trace()) {
                Files.createDirectories(options.traces());
            }
            sayRun(iris, iris.worldSize() + " ranks (TP " + iris.worldSize() + ")", hardware, software, runSeed);
            List<FusedSweepResult.Trace> traces;
            try (FusedBench bench = new FusedBench(iris, options, gemm, cublas, cublasLt, nccl, windows, ccl, kernels, runSeed)) {
                runEach(iris, options.shapes(), Object::toString, bench::run);
                results = bench.measurements();
                traces = bench.traces();
            } finally {
                synchronizeThenClose(iris, ccl, windows, nccl, cublasLt, cublas);  // the windows before their communicator
            }
            if (options.checkOnly) {
                say(iris, "FusedSweep --check-only: " + results.size() + " points checked; nothing timed, no JSON written");
                return checked(failedChecks(results), "point(s) failed their check");
            }
            FusedSweepResult sweep = new FusedSweepResult(RunRecord.now(), hardware, software,
                    RunRecord.command(iris.worldSize(), FusedSweep.class, spec), iris.worldSize(), options.warmup(), options.reps(),
                    options.groupM, results, traces);
            write(iris, options.out.path(), sweep::write, results.size() + " measurements, " + traces.size() + " traces");
        }
        return checked(failedChecks(results), "point(s) failed their check");
    }

    /**
     * Collective: NCCL's two windows, input and output, each of the most bytes any shape of the sweep
     * gives its collective ({@link FusedWorkload#windowBytes}), or an instance that says why there are
     * none.
     */
    private NcclWindows openWindows(Iris iris, NcclComm nccl) {
        long in = 1;
        long out = 1;
        for (FusedShape s : options.shapes()) {
            if (s.unsplittable(iris.worldSize()) == null) {
                long[] bytes = FusedWorkload.windowBytes(s, iris.worldSize());
                in = Math.max(in, bytes[0]);
                out = Math.max(out, bytes[1]);
            }
        }
        NcclWindows windows = NcclWindows.open(iris, nccl, in, out);
        if (nccl.available()) {
            say(iris, windows.available() ? "NCCL on window-registered buffers too: windows of " + in + " and " + out + " bytes"
                    : "NCCL on window-registered buffers unavailable: " + windows.reason());
        }
        return windows;
    }

    /** The checked points (the fused kernels, the library-collective baseline, cuBLASLt) whose check failed. */
    static long failedChecks(List<FusedMeasurement> results) {
        return results.stream().filter(m -> CHECKED.contains(m.impl()) && m.checkFailed()).count();
    }

    private static final Set<String> CHECKED = Set.of(FusedMeasurement.FUSED, FusedMeasurement.BASELINE_IRIS, FusedMeasurement.BASELINE_WINDOW,
            FusedMeasurement.CUBLASLT);
}

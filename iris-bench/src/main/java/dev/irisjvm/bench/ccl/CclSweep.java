package dev.irisjvm.bench.ccl;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.report.CclFigures;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.NcclComm;
import dev.irisjvm.kernels.ccl.NcclWindows;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The collectives sweep: for every op, size and implementation (each iris all-reduce algorithm,
 * the other collectives' kernels, NCCL on plain buffers and NCCL on window-registered symmetric
 * buffers), the time per call launched eagerly and replayed from a CUDA graph, measured with CUDA
 * events (see {@link CclBench}); every output is checked against plain NCCL's output on the same
 * input. Rank 0 writes one {@link SweepResult} and a console table. Where NCCL cannot register
 * symmetric windows ({@link NcclWindows}: older than 2.27, or a registration refused), the sweep
 * records why, once per op, and goes on with plain NCCL.
 *
 * <pre>
 * mvn -q install -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.ccl.CclSweep --out ccl-sweep.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.ccl.CclSweep \
 *     --ops all_reduce --algorithms one_shot,two_shot,auto --max-bytes 16m --reps 10
 * </pre>
 *
 * <p>Measurements: op = all_reduce, all_gather, reduce_scatter, all_to_all, broadcast; impl =
 * iris_one_shot, iris_two_shot, iris_ring, iris_atomic, iris_auto (all-reduce), iris (the others),
 * nccl, nccl_window, and the same with {@code _graph}; issuer = the rank that timed it, peer = -1; bytes = the
 * per-rank buffer as nccl-tests counts it; gbps = algorithm bandwidth (bytes ÷ median). Exit code:
 * 0, 2 for bad options, or 3 if any check failed.
 */
@Command(name = "CclSweep", mixinStandardHelpOptions = true,
        description = "Collectives of Iris for the JVM against NCCL: latency and bus bandwidth, eager and from CUDA graphs.")
public final class CclSweep extends SweepCommand {
    @Mixin
    CclOptions options = new CclOptions();

    public static void main(String[] args) {
        main(new CclSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        IrisConfig env = IrisConfig.fromEnvironment();
        IrisConfig config = env.withHeapSize(options.heapBytes())
                .withDeviceTimeout(Duration.ofMillis(options.deviceTimeoutMs()));
        List<Measurement> results;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library);
             Collectives ccl = Collectives.create(iris, options.collectivesOptions())) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            requireTwoRanks(iris);
            try {
                options.validateFor(iris.worldSize());
            } catch (IllegalArgumentException e) {
                if (iris.rank() == 0) {
                    System.err.println(name() + ": " + e.getMessage());
                }
                return EXIT_USAGE;
            }
            long runSeed = runSeed(iris, options.seed());
            options.seed = runSeed;
            if (iris.rank() == 0) {
                System.out.println("CclSweep: " + iris.worldSize() + " ranks, heap " + SizeList.format(config.heapSize())
                        + " per rank, " + OptionChecks.dtypeName(options.dtype()) + ", ops " + options.ops + ", sizes "
                        + SizeList.format(options.sizes().get(0)) + " .. " + SizeList.format(options.sizes().get(options.sizes().size() - 1))
                        + ", " + ccl + ", seed " + runSeed);
            }
            NcclComm nccl = options.nccl() ? NcclComm.open(iris) : NcclComm.disabled(iris, "--no-nccl");
            if (iris.rank() == 0) {
                System.out.println("CclSweep: " + (nccl.available() ? nccl.version() + ": outputs are checked against NCCL's"
                        : "NCCL unavailable (" + nccl.reason() + "): outputs are checked against a host reference"));
            }
            String ncclVersion = nccl.version();
            long largest = options.sizes().stream().mapToLong(Long::longValue).max().orElseThrow();
            NcclWindows windows = NcclWindows.open(iris, nccl, largest, largest);
            if (iris.rank() == 0 && nccl.available()) {
                System.out.println("CclSweep: " + (windows.available() ? "NCCL on window-registered symmetric buffers: two windows of "
                        + SizeList.format(largest) : CclFigures.WINDOW_UNAVAILABLE + windows.reason()));
            }
            try (CclBench bench = new CclBench(iris, options, ccl, kernels, nccl, windows, runSeed)) {
                for (CclOp op : options.ops()) {
                    long start = System.nanoTime();
                    bench.run(op);
                    if (iris.rank() == 0) {
                        System.out.printf(Locale.ROOT, "CclSweep: %s done in %.1f s%n", op.id(), (System.nanoTime() - start) / 1e9);
                    }
                }
                iris.synchronize();
                results = bench.log().gather(iris);
            } finally {
                try {
                    iris.synchronize();
                } finally {
                    try {
                        windows.close();   // before the communicator it is registered with
                    } finally {
                        nccl.close();
                    }
                }
            }
            String baselines = !options.nccl() ? "NCCL not used (--no-nccl)" : ncclVersion == null ? "NCCL unavailable" : ncclVersion;
            SweepResult sweep = new SweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), RunRecord.hardware(iris),
                    RunRecord.software(baselines), RunRecord.command(iris.worldSize(), CclSweep.class, spec), iris.worldSize(), results);
            if (iris.rank() == 0) {
                RunRecord.write(options.out(), sweep::write);
                System.out.print(CclConsole.format(results, iris.worldSize()));
                System.out.println("CclSweep: " + results.size() + " measurements written to " + options.out().toAbsolutePath());
            }
        }
        return checked(results.stream().filter(CclSweep::failedCheck).count(), "measurement(s) failed their check");
    }

    static boolean failedCheck(Measurement m) {
        return !Verifier.OK.equals(m.check()) && !m.check().startsWith("nccl unavailable")
                && !m.check().startsWith(CclFigures.WINDOW_UNAVAILABLE);
    }
}

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
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.ccl.Collectives;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The collectives sweep: for every op, size and implementation (each iris all-reduce algorithm,
 * the other collectives' kernels, NCCL on plain buffers, NCCL on window-registered symmetric buffers
 * and, for all-gather and broadcast, NCCL's grouped send/receive), the time per call launched
 * eagerly and replayed from a CUDA graph, measured with CUDA events, and up to
 * {@code --one-call-max-bytes} one call from Java to its completion (see {@link CclBench}); every
 * output is checked against plain NCCL's output on the same input. Rank 0 writes one {@link
 * SweepResult} and a console table. Where NCCL cannot register symmetric windows ({@link
 * NcclWindows}: older than 2.27, or a registration refused), the sweep records why, once per op,
 * and goes on with plain NCCL. On one rank it checks every path and output and compares nothing
 * (nothing leaves the GPU): how the paths are checked on a machine of one GPU, where NCCL refuses
 * two ranks.
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
 * nccl, nccl_window, nccl_p2p, the same with {@code _graph}, and each of those with {@code _call}
 * up to {@code --one-call-max-bytes}; issuer = the rank that timed it, peer = -1; bytes = the
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
        return sweep(options::validate, () -> config(options.heapBytes(), options.sweep.deviceTimeoutMs()), this::measure);
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        List<Measurement> results;
        try (Collectives ccl = Collectives.create(iris, options.collectivesOptions())) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            if (iris.worldSize() == 1) {
                say(iris, "one rank: nothing leaves the GPU, so the figures compare nothing; the run checks every "
                        + "implementation's path and output (run with two ranks or more to time)");
            }
            try {
                options.validateFor(iris.worldSize());
            } catch (IllegalArgumentException e) {
                if (iris.rank() == 0) {
                    System.err.println(name() + ": " + e.getMessage());
                }
                return EXIT_USAGE;
            }
            long runSeed = runSeed(iris, options.seed);
            List<Long> sizes = options.sizes();
            say(iris, iris.worldSize() + " ranks, heap " + SizeList.format(iris.config().heapSize()) + " per rank, "
                    + OptionChecks.dtypeName(options.dtype) + ", ops " + options.ops + ", sizes " + SizeList.format(sizes.get(0)) + " .. "
                    + SizeList.format(sizes.get(sizes.size() - 1)) + ", " + ccl + ", seed " + runSeed);
            NcclComm nccl = options.nccl() ? NcclComm.open(iris) : NcclComm.disabled(iris, "--no-nccl");
            say(iris, nccl.available() ? nccl.version() + ": outputs are checked against NCCL's"
                    : "NCCL unavailable (" + nccl.reason() + "): outputs are checked against a host reference");
            String ncclVersion = nccl.version();
            long largest = sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
            NcclWindows windows = NcclWindows.open(iris, nccl, largest, largest);
            if (nccl.available()) {
                say(iris, windows.available() ? "NCCL on window-registered symmetric buffers: two windows of " + SizeList.format(largest)
                        : CclFigures.WINDOW_UNAVAILABLE + windows.reason());
            }
            try (CclBench bench = new CclBench(iris, options, ccl, kernels, nccl, windows, runSeed)) {
                runEach(iris, options.ops(), CclOp::id, bench::run);
                iris.synchronize();
                results = bench.log().gather(iris);
            } finally {
                synchronizeThenClose(iris, windows, nccl);   // the windows before the communicator they are registered with
            }
            String baselines = !options.nccl() ? "NCCL not used (--no-nccl)" : ncclVersion == null ? "NCCL unavailable" : ncclVersion;
            SweepResult sweep = new SweepResult(RunRecord.now(), RunRecord.hardware(iris), RunRecord.software(baselines),
                    RunRecord.command(iris.worldSize(), CclSweep.class, spec), iris.worldSize(), results);
            if (iris.rank() == 0) {
                System.out.print(CclConsole.format(results, iris.worldSize()));
            }
            write(iris, options.out.path(), sweep::write, results.size() + " measurements");
        }
        return checked(results.stream().filter(CclSweep::failedCheck).count(), "measurement(s) failed their check");
    }

    static boolean failedCheck(Measurement m) {
        return !Verifier.OK.equals(m.check()) && !m.check().startsWith("nccl unavailable")
                && !m.check().startsWith(CclFigures.WINDOW_UNAVAILABLE);
    }
}

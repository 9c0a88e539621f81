package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ccl.NcclComm;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The remote-memory-access sweep: for every op, size and ordered pair of ranks, times the
 * operation with CUDA events (median, min, max over repetitions after warm-up), verifies the data,
 * and writes one {@link SweepResult} (rank 0) plus a console table. Baselines in the same run: the
 * copy engine, local copies and NCCL.
 *
 * <pre>
 * mvn -q install -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.rma.RmaSweep --out rma-sweep.json
 * bin/iris-run -n 2 -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.rma.RmaSweep \
 *     --ops load,store,ping_pong --max-bytes 64m --reps 10
 * </pre>
 *
 * <p>Every rank runs the same loop; during a point only its issuer runs (both ranks of the pair for
 * message passing, ping-pong and send/recv, every rank for all-reduce), and the ranks meet on the
 * host between points. A point that fails (a mismatch, a device timeout, a CUDA error) records
 * why in its {@code check} and the sweep goes on. Exit code: 0, or 3 if any check failed.
 */
@Command(name = "RmaSweep", mixinStandardHelpOptions = true,
        description = "Remote-memory-access microbenchmarks of Iris for the JVM, with copy-engine, local and NCCL baselines.")
public final class RmaSweep extends SweepCommand {
    @Mixin
    SweepOptions options = new SweepOptions();

    public static void main(String[] args) {
        main(new RmaSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        IrisConfig env = IrisConfig.fromEnvironment();
        IrisConfig config = env.withHeapSize(options.heapBytes(env.worldSize()))
                .withDeviceTimeout(Duration.ofMillis(options.deviceTimeoutMs()));
        List<Measurement> results;
        SweepResult sweep;
        try (Iris iris = Iris.init(config); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library)) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            requireTwoRanks(iris);
            long runSeed = runSeed(iris, options.seed());
            options.seed = runSeed;
            if (iris.rank() == 0) {
                System.out.println("RmaSweep: " + iris.worldSize() + " ranks, heap " + SizeList.format(config.heapSize())
                        + " per rank, ops " + options.ops + ", sizes " + SizeList.format(options.sizes().get(0)) + " .. "
                        + SizeList.format(options.sizes().get(options.sizes().size() - 1)) + ", seed " + runSeed);
            }
            String ncclVersion;
            try (SweepContext ctx = new SweepContext(iris, options, kernels, runSeed); NcclBench ncclBench = new NcclBench(ctx)) {
                for (RmaOp op : options.ops()) {
                    long start = System.nanoTime();
                    switch (op.family()) {
                        case BANDWIDTH -> new BandwidthBench(ctx).run(op);
                        case ATOMIC -> new AtomicBench(ctx).run(op);
                        case MESSAGE -> new MessageBench(ctx).run(op);
                        case NCCL -> ncclBench.run(op);
                    }
                    if (iris.rank() == 0) {
                        System.out.printf(Locale.ROOT, "RmaSweep: %s done in %.1f s%n", op.id(), (System.nanoTime() - start) / 1e9);
                    }
                }
                iris.synchronize();
                ncclVersion = ncclBench.openedVersion();
                results = ctx.log().gather(iris);
            }
            if (ncclVersion == null) {
                ncclVersion = NcclComm.loadedVersion();
            }
            sweep = new SweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), RunRecord.hardware(iris),
                    RunRecord.software(ncclVersion == null ? "NCCL unavailable" : ncclVersion),
                    RunRecord.command(iris.worldSize(), RmaSweep.class, spec), iris.worldSize(), results);
            if (iris.rank() == 0) {
                RunRecord.write(options.out(), sweep::write);
                System.out.print(ResultTable.format(results));
                System.out.println("RmaSweep: " + results.size() + " measurements written to " + options.out().toAbsolutePath());
            }
        }
        return checked(results.stream().filter(RmaSweep::failedCheck).count(), "measurement(s) failed their check");
    }

    static boolean failedCheck(Measurement m) {
        return !Verifier.OK.equals(m.check()) && !m.check().startsWith("nccl unavailable");
    }
}

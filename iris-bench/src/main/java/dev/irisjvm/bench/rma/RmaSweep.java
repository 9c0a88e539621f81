package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.baselines.NcclComm;
import java.util.List;
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
 * why in its {@code check} and the sweep goes on. Exit code: 0, or 3 if any check failed. With
 * {@code --check-only} every point runs once for its check, on ranks that share a GPU too, and
 * only the checks are printed.
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
        return sweep(options::validate, this::configForWorld, this::measure);
    }

    /** The heap per rank depends on the world size, which the environment tells. */
    private IrisConfig configForWorld() {
        IrisConfig env = IrisConfig.fromEnvironment();
        return config(env, options.heapBytes(env.worldSize()), options.sweep.deviceTimeoutMs());
    }

    private int measure(Iris iris, RmaKernels kernels) throws Exception {
        if (!options.checkOnly() && SharedGpu.refuses(iris, name())) {
            return SharedGpu.EXIT_SHARED_GPU;
        }
        requireTwoRanks(iris);
        long runSeed = runSeed(iris, options.seed);
        List<Long> sizes = options.sizes();
        say(iris, iris.worldSize() + " ranks, heap " + SizeList.format(iris.config().heapSize()) + " per rank, ops " + options.ops
                + ", sizes " + SizeList.format(sizes.get(0)) + " .. " + SizeList.format(sizes.get(sizes.size() - 1)) + ", seed " + runSeed);
        String ncclVersion;
        List<Measurement> results;
        try (SweepContext ctx = new SweepContext(iris, options, kernels, runSeed); NcclBench ncclBench = new NcclBench(ctx)) {
            runEach(iris, options.ops(), RmaOp::id, op -> {
                switch (op.family()) {
                    case BANDWIDTH -> new BandwidthBench(ctx).run(op);
                    case ATOMIC -> new AtomicBench(ctx).run(op);
                    case MESSAGE -> new MessageBench(ctx).run(op);
                    case NCCL -> ncclBench.run(op);
                }
            });
            iris.synchronize();
            ncclVersion = ncclBench.openedVersion();
            results = ctx.log().gather(iris);
        }
        long failed = results.stream().filter(RmaSweep::failedCheck).count();
        if (options.checkOnly()) {
            if (iris.rank() == 0) {
                results.forEach(m -> System.out.println(m.op() + " " + m.impl() + " " + SizeList.format(m.bytes()) + " rank "
                        + m.issuer() + " -> " + m.peer() + ": " + m.check()));
            }
            return checked(failed, "point(s) failed their check");
        }
        if (ncclVersion == null) {
            ncclVersion = NcclComm.loadedVersion();
        }
        SweepResult sweep = new SweepResult(RunRecord.now(), RunRecord.hardware(iris),
                RunRecord.software(ncclVersion == null ? "NCCL unavailable" : ncclVersion),
                RunRecord.command(iris.worldSize(), RmaSweep.class, spec), iris.worldSize(), results);
        if (iris.rank() == 0) {
            System.out.print(ResultTable.format(results));
        }
        write(iris, options.out.path(), sweep::write, results.size() + " measurements");
        return checked(failed, "measurement(s) failed their check");
    }

    static boolean failedCheck(Measurement m) {
        return !Verifier.OK.equals(m.check()) && !m.check().startsWith("nccl unavailable");
    }
}

package dev.irisjvm.bench;

import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.kernels.KernelLibrary;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every sweep's command does around its measurements, with the exit codes they share: 0; 2
 * for a bad option, named on stderr; {@link SharedGpu#EXIT_SHARED_GPU} where ranks share a GPU; 3
 * when a measurement failed its check. Messages start with the command's name; what every rank
 * does alike, only rank 0 says.
 *
 * <pre>{@code
 * public Integer call() throws Exception {
 *     return sweep(options::validate, () -> config(options.rounds().job()), this::measure);
 * }
 *
 * private int measure(Iris iris, RmaKernels kernels) throws Exception {
 *     sayRun(iris, iris.worldSize() + " ranks", hardware, software, seed);
 *     runEach(iris, options.cases(), Object::toString, bench::run);
 *     write(iris, options.out.path(), result::write, results.size() + " measurements");
 *     return checked(failed, "point(s) failed their check");
 * }
 * }</pre>
 */
public abstract class SweepCommand implements Callable<Integer> {
    /** Exit code of a bad option. */
    public static final int EXIT_USAGE = 2;
    /** Exit code of a sweep in which a measurement failed its check. */
    public static final int EXIT_CHECK_FAILED = 3;

    /** What a sweep does on its Iris job with the bench's kernels; returns the exit code. */
    @FunctionalInterface
    protected interface Measure {
        int on(Iris iris, RmaKernels kernels) throws Exception;
    }

    @Spec
    protected CommandSpec spec;

    /** Parses {@code args} into {@code sweep}, runs it and exits with its code. */
    protected static void main(SweepCommand sweep, String[] args) {
        System.exit(new CommandLine(sweep).execute(args));
    }

    /** The command's name, which starts its messages. */
    protected String name() {
        return spec.name();
    }

    /** Runs an option check; false, with its message on stderr, where it throws IllegalArgumentException. */
    protected boolean valid(Runnable check) {
        try {
            check.run();
            return true;
        } catch (IllegalArgumentException e) {
            System.err.println(name() + ": " + e.getMessage());
            return false;
        }
    }

    /**
     * The frame of a sweep's run: checks the options ({@link #EXIT_USAGE} for a bad one), joins the
     * Iris job of {@code config} with the bench's kernels, and measures on them.
     */
    protected int sweep(Runnable validate, Supplier<IrisConfig> config, Measure measure) throws Exception {
        if (!valid(validate)) {
            return EXIT_USAGE;
        }
        try (Iris iris = Iris.init(config.get()); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library)) {
            return measure.on(iris, kernels);
        }
    }

    /** Throws unless the job has at least two ranks. */
    protected void requireTwoRanks(Iris iris) {
        if (iris.worldSize() < 2) {
            throw new IllegalStateException("run with at least two ranks: bin/iris-run -n 2 -- java ... " + getClass().getName());
        }
    }

    /** The run's seed, the same on every rank: --seed, else rank 0's clock; kept as --seed on every rank. */
    protected static long runSeed(Iris iris, SeedOption seed) {
        return seed.keep(iris.broadcast(seed.givenOrClock(), 0));
    }

    /** The environment's configuration with the sweep's heap per rank and device wait timeout. */
    protected static IrisConfig config(long heapBytes, long deviceTimeoutMs) {
        return config(IrisConfig.fromEnvironment(), heapBytes, deviceTimeoutMs);
    }

    /** {@code env} with the sweep's heap per rank and device wait timeout. */
    protected static IrisConfig config(IrisConfig env, long heapBytes, long deviceTimeoutMs) {
        return env.withHeapSize(heapBytes).withDeviceTimeout(Duration.ofMillis(deviceTimeoutMs));
    }

    /** The environment's configuration with the heap per rank and device wait timeout of {@code job}. */
    protected static IrisConfig config(JobOptions job) {
        return config(job.heapBytes(), job.deviceTimeoutMs());
    }

    /** Rank 0 prints {@code line} after the command's name. */
    protected void say(Iris iris, String line) {
        if (iris.rank() == 0) {
            System.out.println(name() + ": " + line);
        }
    }

    /** The run's first line: who runs ({@code ranks}, e.g. "2 ranks"), on what, the heap per rank and the seed. */
    protected void sayRun(Iris iris, String ranks, String hardware, String software, long seed) {
        say(iris, ranks + ", " + hardware + ", " + software + ", heap " + SizeList.format(iris.config().heapSize()) + " per rank, seed "
                + seed);
    }

    /** Where ranks share a GPU ({@code perGpu} > 1), says what the run is then still good for. */
    protected void sayIfGpusShared(Iris iris, int perGpu) {
        if (perGpu > 1) {
            say(iris, "the ranks share GPUs (up to " + perGpu + " per GPU): the outputs are checked, "
                    + "but the times measure the ranks' turns on each GPU and the report compares nothing");
        }
    }

    /**
     * Waits for the GPU's queued work, then closes {@code handles} in order (a null one skipped), each
     * even where waiting or an earlier close failed: the baselines' handles must outlive the calls
     * queued on them, and a handle registered with another closes before it.
     */
    protected static void synchronizeThenClose(Iris iris, AutoCloseable... handles) throws Exception {
        try {
            iris.synchronize();
        } finally {
            closeInOrder(handles, 0);
        }
    }

    private static void closeInOrder(AutoCloseable[] handles, int from) throws Exception {
        if (from == handles.length) {
            return;
        }
        try {
            if (handles[from] != null) {
                handles[from].close();
            }
        } finally {
            closeInOrder(handles, from + 1);
        }
    }

    /** Runs {@code run} on each item in order, saying how long each took (by {@code label}). */
    protected <T> void runEach(Iris iris, Iterable<T> items, Function<T, String> label, Consumer<T> run) {
        for (T item : items) {
            long start = System.nanoTime();
            run.accept(item);
            say(iris, String.format(Locale.ROOT, "%s done in %.1f s", label.apply(item), (System.nanoTime() - start) / 1e9));
        }
    }

    /** Rank 0 writes the run's JSON to {@code out} and says {@code what} it wrote there (e.g. "12 measurements"). */
    protected void write(Iris iris, Path out, RunRecord.JsonWriter json, String what) throws IOException {
        if (iris.rank() == 0) {
            write(out, json, what);
        }
    }

    /** Writes the run's JSON to {@code out} and says {@code what} it wrote there: for a sweep in one process. */
    protected void write(Path out, RunRecord.JsonWriter json, String what) throws IOException {
        RunRecord.write(out, json);
        System.out.println(name() + ": " + what + " written to " + out.toAbsolutePath());
    }

    /** 0, or {@link #EXIT_CHECK_FAILED} once it has said how many {@code what} (e.g. "shape(s) failed the output check"). */
    protected int checked(long failed, String what) {
        if (failed > 0) {
            System.out.println(name() + ": " + failed + " " + what);
            return EXIT_CHECK_FAILED;
        }
        return 0;
    }
}

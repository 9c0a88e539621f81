package dev.irisjvm.bench;

import dev.irisjvm.core.Iris;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every sweep's command does around its measurements, with the exit codes they share: 0; 2
 * for a bad option, named on stderr; {@link SharedGpu#EXIT_SHARED_GPU} where ranks share a GPU; 3
 * when a measurement failed its check. Messages start with the command's name.
 *
 * <pre>{@code
 * public Integer call() throws Exception {
 *     if (!valid(options::validate)) {
 *         return EXIT_USAGE;
 *     }
 *     ...
 *     return checked(failed, "measurement(s) failed their check");
 * }
 * }</pre>
 */
public abstract class SweepCommand implements Callable<Integer> {
    /** Exit code of a bad option. */
    public static final int EXIT_USAGE = 2;
    /** Exit code of a sweep in which a measurement failed its check. */
    public static final int EXIT_CHECK_FAILED = 3;

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

    /** Throws unless the job has at least two ranks. */
    protected void requireTwoRanks(Iris iris) {
        if (iris.worldSize() < 2) {
            throw new IllegalStateException("run with at least two ranks: bin/iris-run -n 2 -- java ... " + getClass().getName());
        }
    }

    /** The run's seed, the same on every rank: {@code given}, else rank 0's clock. */
    protected static long runSeed(Iris iris, Long given) {
        return iris.broadcast(given != null ? given : System.nanoTime(), 0);
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

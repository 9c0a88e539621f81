package dev.irisjvm.bench.rma;

import static dev.irisjvm.bench.OptionChecks.atLeast;

import picocli.CommandLine.Option;

/**
 * Fewer timed repetitions from a size on (a picocli mixin), where each repetition moves so much
 * that a few already give a stable median: the options the two size sweeps, {@link RmaSweep} and
 * {@link dev.irisjvm.bench.ccl.CclSweep}, share word for word beside their own --reps.
 *
 * <pre>{@code
 * @Mixin LargeSizeReps large = new LargeSizeReps();
 * large.validate();
 * large.repsFor(1L << 30, 20);   // 5 with the defaults: 1 GiB is at least --large-bytes 256 MiB
 * }</pre>
 */
public final class LargeSizeReps {
    @Option(names = "--large-reps", defaultValue = "5", description = "Timed repetitions for sizes of --large-bytes and more (default: ${DEFAULT-VALUE}).")
    int largeReps;

    @Option(names = "--large-bytes", converter = SizeConverter.class, defaultValue = "256m",
            description = "Size from which --large-reps applies (default: 256 MiB).")
    long largeBytes;

    /** Throws IllegalArgumentException naming the option that is out of range. */
    public void validate() {
        atLeast("--large-reps", largeReps, 1);
    }

    /** Timed repetitions at {@code bytes} for a sweep of {@code reps}: never more than {@code reps}. */
    public int repsFor(long bytes, int reps) {
        return bytes >= largeBytes ? Math.min(reps, largeReps) : reps;
    }
}

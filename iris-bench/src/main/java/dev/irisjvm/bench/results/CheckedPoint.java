package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A point timed in rounds whose output was checked: what the MoE, step and nodes measurements
 * share. Its check is
 * {@link #OK} (matched the reference), {@link #REFERENCE} (it is the reference), empty (a part that
 * is not checked), {@link #NOT_RUN} and why (nothing was timed), or what was wrong.
 */
public interface CheckedPoint {
    String OK = "ok";
    String REFERENCE = "reference";
    /** How the check of a point that did not run starts. */
    String NOT_RUN = "not run: ";

    /** The implementation that was timed. */
    String impl();

    int reps();

    double medianUs();

    double minUs();

    double maxUs();

    /** Each round's median, in the order the rounds ran. */
    List<Double> roundMediansUs();

    String check();

    /** Whether a time was measured. */
    default boolean timed() {
        return reps() > 0 && medianUs() > 0;
    }

    /** Whether the output check failed (not merely a point that did not run, or a part that is not checked). */
    default boolean checkFailed() {
        return !check().isEmpty() && !OK.equals(check()) && !REFERENCE.equals(check()) && !check().startsWith(NOT_RUN);
    }

    /** {@code why} as the check of a point that did not run. */
    static String notRun(String why) {
        return why.startsWith(NOT_RUN) ? why : NOT_RUN + why;
    }
}

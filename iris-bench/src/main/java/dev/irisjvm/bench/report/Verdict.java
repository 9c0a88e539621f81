package dev.irisjvm.bench.report;

/**
 * The verdicts of the target tables that hold a ratio against a lower bound, in the order they are
 * reached: a wrong output fails however fast it was, a run whose ranks shared GPUs judges nothing,
 * and a ratio that is not there is not measured, never a pass or a fail.
 *
 * <pre>{@code
 * Verdict.atLeast(1.31, 1.25, false, false);   // "pass"
 * Verdict.atLeast(Double.NaN, 1.25, false, false);   // "not measured"
 * }</pre>
 */
final class Verdict {
    static final String PASS = "pass";
    static final String FAIL = "**FAIL**";
    static final String OUTPUT_FAIL = "**FAIL** (output check)";
    static final String NOT_MEASURED = "not measured";

    private Verdict() {}

    static String atLeast(double ratio, double min, boolean checkFailed, boolean sharedGpu) {
        if (checkFailed) {
            return OUTPUT_FAIL;
        }
        if (sharedGpu) {
            return SharedGpus.NOT_JUDGED;
        }
        if (Double.isNaN(ratio)) {
            return NOT_MEASURED;
        }
        return ratio >= min ? PASS : FAIL;
    }
}

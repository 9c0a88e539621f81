package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.RanksPerGpu;

/**
 * What a report says of a run whose ranks shared GPUs ({@link RanksPerGpu#sharedGpu()}): its kernels
 * took turns on each GPU, so its times measure the turns; it shows them and its checks, but compares
 * and judges nothing.
 *
 * <pre>{@code
 * header.item("ranks", run.worldSize() + SharedGpus.ranks(run));   // "2, one GPU each"
 * }</pre>
 */
final class SharedGpus {
    /** The verdict of a point that such a run cannot judge. */
    static final String NOT_JUDGED = "not judged (ranks shared GPUs)";
    /** The end of a times section's first sentence, in place of what its ratios mean. */
    static final String TIMES = ". The ranks shared GPUs: these times include the ranks' turns on each GPU and compare nothing.";

    private SharedGpus() {}

    /** What follows the header's count of ranks. */
    static String ranks(RanksPerGpu run) {
        return run.sharedGpu() ? ", sharing GPUs (up to " + run.maxRanksPerGpu() + " per GPU): nothing is compared" : ", one GPU each";
    }

    /** The target section of such a run: the goal, why nothing is judged, and the points with no verdict. */
    static String targetSection(String goal, RanksPerGpu run, MarkdownTable points) {
        return "## Target\n\n" + goal + "\n\nNot judged: the " + run.worldSize() + " ranks shared GPUs (up to " + run.maxRanksPerGpu()
                + " per GPU), so their kernels took turns on each GPU and the times measure the turns; no speedup is reported. "
                + "Run with one GPU per rank.\n\n" + points.renderOrNone() + "\n";
    }
}

package dev.irisjvm.bench.jmh;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Gpu;

/**
 * What every multi-rank JMH benchmark does in {@code @Setup(Level.Iteration)}, so that the ranks
 * start each timed batch together. JMH knows nothing of the other ranks; with
 * {@code Mode.SingleShotTime}, fixed batches and fixed iteration counts, every rank runs the same
 * calls in the same order, and this meeting keeps one rank's batch from overlapping another's
 * setup or teardown.
 *
 * <pre>{@code
 * @Setup(Level.Iteration)
 * public void startIteration() {
 *     IterationStart.align(iris);
 * }
 * }</pre>
 */
public final class IterationStart {
    private IterationStart() {}

    public static void align(Iris iris) {
        // The CUDA device is a per-thread setting and JMH does not promise that the trial setup
        // (where Iris.init selected the device) ran on the thread that runs this iteration.
        Gpu.setDevice(iris.device());
        iris.synchronize();   // nothing from the previous iteration is still queued
        iris.hostBarrier();   // every rank starts the timed batch together
    }
}

package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import java.util.ArrayList;
import java.util.List;

/**
 * A benchmark on one rank that times its implementations in step with every other rank: the Iris
 * job, its stream, a gated {@link RepTimer} on that stream, the {@link Lockstep} that makes one
 * rank's failure every rank's, and the measurements so far. Every rank runs the same calls in the
 * same order.
 *
 * <pre>{@code
 * final class StepBench extends LockstepBench<StepMeasurement> {
 *     StepBench(Iris iris, RmaKernels kernels) {
 *         super(iris, kernels);
 *     }
 * }
 * }</pre>
 *
 * @param <M> what one measurement records
 */
public abstract class LockstepBench<M> implements AutoCloseable {
    protected final Iris iris;
    protected final Stream stream;
    protected final RepTimer timer;
    protected final Lockstep lockstep;
    protected final int rank;
    protected final int world;
    protected final List<M> measurements = new ArrayList<>();

    protected LockstepBench(Iris iris, RmaKernels kernels) {
        this.iris = iris;
        this.stream = iris.stream();
        this.timer = new RepTimer(iris, kernels, stream, true);
        this.lockstep = new Lockstep(iris);
        this.rank = iris.rank();
        this.world = iris.worldSize();
    }

    /** The measurements so far, in the order they were taken. */
    public List<M> measurements() {
        return List.copyOf(measurements);
    }

    /** Collective: frees the timer's events. */
    @Override
    public void close() {
        timer.close();
    }
}

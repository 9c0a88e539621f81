package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import java.util.ArrayList;
import java.util.List;

/**
 * A benchmark on one rank that times its implementations in step with every other rank: the Iris
 * job, its stream, a gated {@link RepTimer} on that stream, the {@link Lockstep} that makes one
 * rank's failure every rank's, and the measurements so far, which rank 0 logs as they come. Every
 * rank runs the same calls in the same order.
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
        this(iris, kernels, true);
    }

    /**
     * {@code gated}: whether the timed calls queue behind a gate ({@link RepTimer}). A run without
     * warm-up must not gate: a first call that blocks the host (a library's lazy setup) would keep
     * it from ever opening the gate, while the peers wait in the next barrier.
     */
    protected LockstepBench(Iris iris, RmaKernels kernels, boolean gated) {
        this.iris = iris;
        this.stream = iris.stream();
        this.timer = new RepTimer(iris, kernels, stream, gated);
        this.lockstep = new Lockstep(iris);
        this.rank = iris.rank();
        this.world = iris.worldSize();
    }

    /** Keeps {@code m}; rank 0 prints {@code line}, what the run's log says of it. */
    protected void keep(M m, String line) {
        measurements.add(m);
        if (rank == 0) {
            System.out.println(line);
        }
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

package dev.irisjvm.bench.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code Iris.barrier()} across all ranks: {@code barrierPipelined} times barriers issued back to
 * back (the device cost of one, target at most 10 µs median); {@code barrier} adds a
 * {@code synchronize()} after each, the latency a host that waits on every barrier sees.
 *
 * <pre>
 * bin/iris-run -n 2 -- sh -c 'exec java -Djmh.ignoreLock=true -cp "iris-bench/target/lib/*" \
 *     org.openjdk.jmh.Main BarrierBenchmark -foe true -rf json -rff jmh-rank$IRIS_RANK.json'
 * </pre>
 *
 * <p>A barrier is collective: every rank must call it as often as the others, which
 * SingleShotTime with fixed batches and iteration counts guarantees (a time-based mode would
 * leave one rank waiting on the device for a barrier its peer never enqueues).
 */
@Warmup(iterations = 10, batchSize = BarrierBenchmark.BATCH)
@Measurement(iterations = 30, batchSize = BarrierBenchmark.BATCH)
public class BarrierBenchmark extends RankBenchmark {
    /** Barriers per timed batch. */
    static final int BATCH = 100;

    @Setup(Level.Trial)
    public void setUp() {
        start("BarrierBenchmark", 0);
        iris.barrier();
        iris.synchronize();
    }

    @Benchmark
    public void barrier() {
        iris.barrier();
        iris.synchronize();
    }

    /** Barriers in a row, as a loop of collectives issues them: the device cost of one barrier. */
    static final int PIPELINED = 100;

    @Benchmark
    @OperationsPerInvocation(PIPELINED)
    @Warmup(iterations = 10, batchSize = 1)
    @Measurement(iterations = 30, batchSize = 1)
    public void barrierPipelined() {
        for (int i = 0; i < PIPELINED; i++) {
            iris.barrier();
        }
        iris.synchronize();
    }
}

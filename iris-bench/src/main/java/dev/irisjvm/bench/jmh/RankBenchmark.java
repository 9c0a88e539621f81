package dev.irisjvm.bench.jmh;

import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.gpu.Gpu;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What every multi-rank JMH benchmark shares. JMH knows nothing of the other ranks: with
 * {@code Mode.SingleShotTime}, fixed batches and fixed iteration counts (each benchmark's
 * {@code @Warmup} and {@code @Measurement}), every rank makes the same calls in the same order, and
 * the ranks meet before every iteration so that one rank's batch does not overlap another's setup
 * or teardown. Forks are 0 because the ranks' JVMs are the launcher's children;
 * {@code -Djmh.ignoreLock=true} because all ranks share one host and JMH otherwise lets only one
 * of them run.
 *
 * <pre>{@code
 * @Setup(Level.Trial)
 * public void setUp() {
 *     start("MyBenchmark", 2 * bytes + HEAP_SLACK);
 *     in = keep(iris.heap().randn(DType.F32, rows, 1024));   // closed at teardown
 * }
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(0)
public abstract class RankBenchmark {
    protected Iris iris;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();

    /**
     * Joins the job with at least {@code heapBytes} of heap per rank (the same on every rank: all
     * compute it from the benchmark's parameters; 0 keeps the environment's), and refuses to time
     * where ranks share a GPU.
     */
    protected void start(String benchmark, long heapBytes) {
        IrisConfig config = IrisConfig.fromEnvironment();
        if (config.heapSize() < heapBytes) {
            config = config.withHeapSize(heapBytes);
        }
        iris = Iris.init(config);
        SharedGpu.requireOwnGpus(iris, benchmark);
    }

    /** Closes {@code resource} at teardown, after every rank is done with it; the last kept closes first. */
    protected <T extends AutoCloseable> T keep(T resource) {
        resources.push(resource);
        return resource;
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        // The CUDA device is a per-thread setting and JMH does not promise that the trial setup
        // (where Iris.init selected the device) ran on the thread that runs this iteration.
        Gpu.setDevice(iris.device());
        iris.synchronize();   // nothing from the previous iteration is still queued
        iris.hostBarrier();   // every rank starts the timed batch together
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        // Every rank drains its stream, then they meet: no peer's kernel still touches what closes.
        iris.synchronize();
        iris.hostBarrier();
        while (!resources.isEmpty()) {
            resources.pop().close();
        }
        iris.close();
    }
}

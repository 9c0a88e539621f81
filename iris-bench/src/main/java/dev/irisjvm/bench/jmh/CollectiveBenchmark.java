package dev.irisjvm.bench.jmh;

import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One whole collective as a Java caller sees it: the call plus {@code iris.synchronize()}, bf16,
 * on every rank at once. {@code allReduce}: sum with the AUTO algorithm, {@code bytes} in and out
 * per rank. {@code allGather}: {@code bytes} of output per rank (world x the input, as nccl-tests
 * counts it; rounded down to a multiple of the world size in elements).
 *
 * <pre>
 * bin/iris-run -n 2 -- sh -c 'exec java -Djmh.ignoreLock=true -cp "iris-bench/target/lib/*" \
 *     org.openjdk.jmh.Main CollectiveBenchmark -foe true -rf json -rff jmh-rank$IRIS_RANK.json'
 * </pre>
 *
 * <p>Collectives are collective: every rank must make the same calls, which SingleShotTime with a
 * fixed batch and fixed iteration counts guarantees, and the ranks meet before every iteration
 * ({@link IterationStart}). Forks are 0 because the ranks' JVMs are the launcher's children;
 * {@code -Djmh.ignoreLock=true} because all ranks share one host. JMH's ss score is per batch of
 * {@value #BATCH} calls (the report divides).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 10, batchSize = CollectiveBenchmark.BATCH)
@Measurement(iterations = 30, batchSize = CollectiveBenchmark.BATCH)
@Fork(0)
public class CollectiveBenchmark {
    /** Calls per timed batch. */
    static final int BATCH = 20;
    /** Room in the heap beyond the tensors: the collectives' workspace (2 x 16 MiB staging), allocator alignment. */
    private static final long HEAP_SLACK = 128L << 20;

    /** 4 KiB, 64 KiB, 1 MiB, 16 MiB. */
    @Param({"4096", "65536", "1048576", "16777216"})
    public long bytes;

    private Iris iris;
    private Collectives ccl;
    private SymTensor in;
    private SymTensor out;
    private SymTensor gatherIn;
    private SymTensor gatherOut;

    @Setup(Level.Trial)
    public void setUp() {
        long elements = bytes / DType.BF16.byteSize();
        IrisConfig config = IrisConfig.fromEnvironment();
        long needed = 4 * bytes + HEAP_SLACK;   // in, out, the gather's input and output
        if (config.heapSize() < needed) {
            config = config.withHeapSize(needed);   // the same on every rank: all compute it from bytes
        }
        iris = Iris.init(config);
        SharedGpu.requireOwnGpus(iris, "CollectiveBenchmark");
        long perRank = elements / iris.worldSize();
        if (perRank < 1) {
            throw new IllegalArgumentException("bytes " + bytes + " hold less than one bf16 element per rank");
        }
        ccl = Collectives.create(iris);
        in = iris.heap().uniform(0x5EEDL + iris.rank(), -1.0, 1.0, DType.BF16, elements);
        out = iris.heap().empty(DType.BF16, elements);
        gatherIn = iris.heap().uniform(0xC0FFEEL + iris.rank(), -1.0, 1.0, DType.BF16, perRank);
        gatherOut = iris.heap().empty(DType.BF16, perRank * iris.worldSize());
        // First calls outside any timing; then every rank is idle and in step.
        ccl.allReduce(in, out, ReduceOp.SUM, iris.stream());
        ccl.allGather(gatherIn, gatherOut, iris.stream());
        iris.synchronize();
        iris.hostBarrier();
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        IterationStart.align(iris);
    }

    @Benchmark
    public void allReduce() {
        ccl.allReduce(in, out, ReduceOp.SUM, iris.stream());
        iris.synchronize();
    }

    @Benchmark
    public void allGather() {
        ccl.allGather(gatherIn, gatherOut, iris.stream());
        iris.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        // Every rank drains its stream, then they meet: no peer's kernel still touches these tensors.
        iris.synchronize();
        iris.hostBarrier();
        gatherOut.close();
        gatherIn.close();
        out.close();
        in.close();
        ccl.close();
        iris.close();
    }
}

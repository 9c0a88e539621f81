package dev.irisjvm.bench.jmh;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
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
 * ({@link RankBenchmark}). JMH's ss score is per batch of {@value #BATCH} calls (the report
 * divides).
 */
@Warmup(iterations = 10, batchSize = CollectiveBenchmark.BATCH)
@Measurement(iterations = 30, batchSize = CollectiveBenchmark.BATCH)
public class CollectiveBenchmark extends RankBenchmark {
    /** Calls per timed batch. */
    static final int BATCH = 20;
    /** Room in the heap beyond the tensors: the collectives' workspace (2 x 16 MiB staging), allocator alignment. */
    private static final long HEAP_SLACK = 128L << 20;

    /** 4 KiB, 64 KiB, 1 MiB, 16 MiB. */
    @Param({"4096", "65536", "1048576", "16777216"})
    public long bytes;

    private Collectives ccl;
    private SymTensor in;
    private SymTensor out;
    private SymTensor gatherIn;
    private SymTensor gatherOut;

    @Setup(Level.Trial)
    public void setUp() {
        long elements = bytes / DType.BF16.byteSize();
        start("CollectiveBenchmark", 4 * bytes + HEAP_SLACK);   // in, out, the gather's input and output
        long perRank = elements / iris.worldSize();
        if (perRank < 1) {
            throw new IllegalArgumentException("bytes " + bytes + " hold less than one bf16 element per rank");
        }
        ccl = keep(Collectives.create(iris));
        in = keep(iris.heap().uniform(0x5EEDL + iris.rank(), -1.0, 1.0, DType.BF16, elements));
        out = keep(iris.heap().empty(DType.BF16, elements));
        gatherIn = keep(iris.heap().uniform(0xC0FFEEL + iris.rank(), -1.0, 1.0, DType.BF16, perRank));
        gatherOut = keep(iris.heap().empty(DType.BF16, perRank * iris.worldSize()));
        // First calls outside any timing; then every rank is idle and in step.
        ccl.allReduce(in, out, ReduceOp.SUM, iris.stream());
        ccl.allGather(gatherIn, gatherOut, iris.stream());
        iris.synchronize();
        iris.hostBarrier();
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
}

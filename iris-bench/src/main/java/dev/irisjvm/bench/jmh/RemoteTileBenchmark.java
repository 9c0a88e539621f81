package dev.irisjvm.bench.jmh;

import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.RemoteTile;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Tile;
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
 * One whole host-initiated tile operation as a Java caller sees it: the launch plus
 * {@code iris.synchronize()}. Every rank does it at once towards the next rank (a ring), on an
 * F32 tile of {@code bytes / 4096} rows x 1024 columns. The report turns µs/op into GB/s.
 *
 * <pre>
 * bin/iris-run -n 2 -- sh -c 'exec java -Djmh.ignoreLock=true -cp "iris-bench/target/lib/*" \
 *     org.openjdk.jmh.Main RemoteTileBenchmark -foe true -rf json -rff jmh-rank$IRIS_RANK.json'
 * </pre>
 *
 * <p>Mode.SingleShotTime with a fixed batch and fixed iteration counts, and a rank meeting
 * before every iteration, keep the ranks in step (a time-based mode lets one rank run more
 * calls than another). JMH's ss score is per batch of {@value #BATCH} operations. Forks are 0
 * because the ranks' JVMs are the launcher's children; {@code -Djmh.ignoreLock=true} because
 * all ranks share one host and JMH otherwise lets only one of them run.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, batchSize = RemoteTileBenchmark.BATCH)
@Measurement(iterations = 20, batchSize = RemoteTileBenchmark.BATCH)
@Fork(0)
public class RemoteTileBenchmark {
    /** Operations per timed batch: enough to dwarf the timer at 4 KiB, few enough at 256 MiB. */
    static final int BATCH = 10;
    static final long COLUMNS = 1024;
    /** Room in the heap beyond the two tensors: the reserved block and allocator alignment. */
    private static final long HEAP_SLACK = 64L << 20;

    @Param({"loadRemote", "storeRemote", "atomicAdd"})
    public String op;

    /** 4 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB. */
    @Param({"4096", "65536", "1048576", "16777216", "268435456"})
    public long bytes;

    private Iris iris;
    private SymTensor src;
    private SymTensor dst;
    private Runnable operation;

    @Setup(Level.Trial)
    public void setUp() {
        long rowBytes = COLUMNS * DType.F32.byteSize();
        if (bytes < rowBytes || bytes % rowBytes != 0) {
            throw new IllegalArgumentException("bytes must be a multiple of " + rowBytes + ", got " + bytes);
        }
        IrisConfig config = IrisConfig.fromEnvironment();
        long needed = 2 * bytes + HEAP_SLACK;
        if (config.heapSize() < needed) {
            config = config.withHeapSize(needed);   // same on every rank: all compute it from bytes
        }
        iris = Iris.init(config);
        SharedGpu.requireOwnGpus(iris, "RemoteTileBenchmark");
        int peer = (iris.rank() + 1) % iris.worldSize();
        src = iris.heap().randn(DType.F32, bytes / rowBytes, COLUMNS);
        dst = iris.heap().zeros(DType.F32, bytes / rowBytes, COLUMNS);
        Tile local = src.whole();
        Tile target = dst.whole();
        operation = switch (op) {
            case "loadRemote" -> {
                RemoteTile there = src.whole().on(peer);   // dst = peer's src
                yield () -> there.loadRemote(target);
            }
            case "storeRemote" -> {
                RemoteTile there = target.on(peer);        // peer's dst = src
                yield () -> there.storeRemote(local);
            }
            case "atomicAdd" -> {
                RemoteTile there = target.on(peer);        // peer's dst += src
                yield () -> there.atomicAdd(local);
            }
            default -> throw new IllegalArgumentException("op must be loadRemote, storeRemote or atomicAdd, got " + op);
        };
        iris.barrier();
        iris.synchronize();
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        IterationStart.align(iris);
    }

    @Benchmark
    public void remoteTile() {
        operation.run();
        iris.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        // Every rank drains its stream, then they meet: no peer's kernel still touches these tensors.
        iris.synchronize();
        iris.hostBarrier();
        dst.close();
        src.close();
        iris.close();
    }
}

package dev.irisjvm.bench.jmh;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.RemoteTile;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Tile;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Java-side cost of one host-initiated tile operation: argument checks, argument packing and the
 * kernel launch, without waiting for the GPU (target: at most 5 µs median). Every rank launches
 * the same number of operations on a 4 KiB tile (1 x 1024 F32) towards the next rank.
 *
 * <pre>
 * bin/iris-run -n 2 -- sh -c 'exec java -Djmh.ignoreLock=true -cp "iris-bench/target/lib/*" \
 *     org.openjdk.jmh.Main "jmh.LaunchBenchmark" -foe true -rf json -rff jmh-rank$IRIS_RANK.json'
 * </pre>
 *
 * <p>The long warm-up (400 batches, about 13,000 calls) lets the JIT compile the whole call path
 * before anything is timed. A batch of {@value #BATCH} launches stays well below the depth of CUDA's launch queue
 * (about a thousand pending launches), so a launch never waits for the GPU to make room; the
 * queue is drained at the end of every iteration, outside the timing. SingleShotTime with fixed
 * batches and iteration counts gives every rank the same number of launches.
 */
@Warmup(iterations = 400, batchSize = LaunchBenchmark.BATCH)
@Measurement(iterations = 200, batchSize = LaunchBenchmark.BATCH)
public class LaunchBenchmark extends RankBenchmark {
    /** Launches per timed batch. */
    static final int BATCH = 32;

    @Param({"loadRemote", "storeRemote", "atomicAdd"})
    public String op;

    private Tile local;
    private RemoteTile remote;
    private int which;

    @Setup(Level.Trial)
    public void setUp() {
        start("LaunchBenchmark", 0);
        SymTensor a = keep(iris.heap().randn(DType.F32, 1, 1024));
        SymTensor b = keep(iris.heap().zeros(DType.F32, 1, 1024));
        int peer = (iris.rank() + 1) % iris.worldSize();
        which = switch (op) {
            case "loadRemote" -> 0;
            case "storeRemote" -> 1;
            case "atomicAdd" -> 2;
            default -> throw new IllegalArgumentException("op must be loadRemote, storeRemote or atomicAdd, got " + op);
        };
        // loadRemote reads the peer's a into the local b; the others write the local a into the peer's b.
        remote = which == 0 ? a.whole().on(peer) : b.whole().on(peer);
        local = which == 0 ? b.whole() : a.whole();
        iris.barrier();
        iris.synchronize();
    }

    @Benchmark
    public void launch() {
        switch (which) {
            case 0 -> remote.loadRemote(local);
            case 1 -> remote.storeRemote(local);
            default -> remote.atomicAdd(local);
        }
    }

    @TearDown(Level.Iteration)
    public void drain() {
        iris.synchronize();
    }
}

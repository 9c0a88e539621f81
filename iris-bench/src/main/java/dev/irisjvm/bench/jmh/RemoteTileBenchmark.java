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
 * calls than another). JMH's ss score is per batch of {@value #BATCH} operations. Forks, locks:
 * {@link RankBenchmark}.
 */
@Warmup(iterations = 5, batchSize = RemoteTileBenchmark.BATCH)
@Measurement(iterations = 20, batchSize = RemoteTileBenchmark.BATCH)
public class RemoteTileBenchmark extends RankBenchmark {
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

    private Runnable operation;

    @Setup(Level.Trial)
    public void setUp() {
        long rowBytes = COLUMNS * DType.F32.byteSize();
        if (bytes < rowBytes || bytes % rowBytes != 0) {
            throw new IllegalArgumentException("bytes must be a multiple of " + rowBytes + ", got " + bytes);
        }
        start("RemoteTileBenchmark", 2 * bytes + HEAP_SLACK);
        int peer = (iris.rank() + 1) % iris.worldSize();
        SymTensor src = keep(iris.heap().randn(DType.F32, bytes / rowBytes, COLUMNS));
        SymTensor dst = keep(iris.heap().zeros(DType.F32, bytes / rowBytes, COLUMNS));
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

    @Benchmark
    public void remoteTile() {
        operation.run();
        iris.synchronize();
    }
}

package dev.irisjvm.bench;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Java-side cost of one host-initiated tile operation: argument checks, argument packing and the
 * launch call, without waiting for the GPU. Every rank runs it at once, each storing a 4 KiB tile
 * into the next rank.
 *
 * <pre>
 * bin/iris-run -n 2 -- java -jar iris-bench/target/benchmarks.jar TileLaunchBenchmark -rf json
 * </pre>
 *
 * <p>Forks are off: the ranks' JVMs are the launcher's children and must stay in one job. The
 * queue is drained after every iteration so that launches do not pile up behind the GPU.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(0)
public class TileLaunchBenchmark {
    private Iris iris;
    private SymTensor buffer;
    private Tile local;
    private RemoteTile remote;

    @Setup(Level.Trial)
    public void setUp() {
        iris = Iris.init();
        buffer = iris.heap().randn(DType.F32, 1024);
        local = buffer.whole();
        remote = buffer.whole().on((iris.rank() + 1) % iris.worldSize());
        iris.barrier();
        iris.synchronize();
    }

    @Benchmark
    public void storeRemoteLaunch() {
        remote.storeRemote(local);
    }

    @TearDown(Level.Iteration)
    public void drain() {
        iris.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        iris.synchronize();
        buffer.close();
        iris.close();
    }
}

package dev.irisjvm.bench.jmh;

import dev.irisjvm.bench.fused.FusedShape;
import dev.irisjvm.bench.fused.FusedWorkload;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.fused.FusedConfig;
import dev.irisjvm.kernels.fused.FusedGemm;
import dev.irisjvm.kernels.fused.FusedOp;
import java.util.Locale;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A fused GEMM + communication call as a Java caller sees it, against cuBLAS then NCCL in the same
 * JVM: {@code fused} is the operation's AUTO variant plus {@code iris.synchronize()}, {@code
 * baseline} the rank's cuBLAS GEMM and the NCCL collective plus {@code iris.synchronize()}, on the
 * same tensors ({@link FusedWorkload}; global shape {@code shape}, TP = world size). Every rank runs
 * it at once:
 *
 * <pre>
 * bin/iris-run -n 2 -- sh -c 'exec java -Djmh.ignoreLock=true -cp "iris-bench/target/lib/*" \
 *     org.openjdk.jmh.Main FusedBenchmark -foe true -rf json -rff fused-jmh-rank$IRIS_RANK.json'
 * </pre>
 *
 * <p>As {@link CollectiveBenchmark}: SingleShotTime with fixed batches and iteration counts keeps
 * the ranks' calls identical, {@link RankBenchmark} aligns them before every iteration. The ss
 * score is per batch of {@value #BATCH} calls. The CUDA-event sweep ({@code bin/iris-bench fused}) is the measurement the report judges by;
 * this one adds the host's view (launch and synchronization included).
 */
@Warmup(iterations = 5, batchSize = FusedBenchmark.BATCH)
@Measurement(iterations = 20, batchSize = FusedBenchmark.BATCH)
public class FusedBenchmark extends RankBenchmark {
    /** Calls per timed batch. */
    static final int BATCH = 10;

    @Param({"all_scatter", "all_reduce", "reduce_scatter", "all_gather"})
    public String op;

    /** The layer's global M x N x K. */
    @Param({"4096x4096x4096"})
    public String shape;

    private FusedWorkload workload;
    private FusedGemm fused;
    private CublasGemm cublas;
    private NcclComm nccl;

    @Setup(Level.Trial)
    public void setUp() {
        start("FusedBenchmark", 4L << 30);
        FusedOp fusedOp = FusedOp.valueOf(op.toUpperCase(Locale.ROOT));
        workload = keep(FusedWorkload.allocate(iris, FusedShape.parse(fusedOp, shape), 0x5EEDL));
        fused = keep(workload.create(FusedConfig.defaults()));
        cublas = keep(CublasGemm.open(iris.stream()));
        nccl = keep(NcclComm.open(iris));
        if (!nccl.available()) {
            throw new IllegalStateException("NCCL unavailable: " + nccl.reason());
        }
        // First calls outside any timing; then every rank is idle and in step.
        workload.fused(fused);
        workload.baseline(cublas, nccl);
        iris.synchronize();
        iris.hostBarrier();
    }

    @Benchmark
    public void fused() {
        workload.fused(fused);
        iris.synchronize();
    }

    @Benchmark
    public void baseline() {
        workload.baseline(cublas, nccl);
        iris.synchronize();
    }
}

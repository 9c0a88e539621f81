package dev.irisjvm.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.irisjvm.bench.rma.SizeList;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The pass/fail targets every report judges by, read from {@value #FILE}: the copy beside the
 * reports (docs/benchmarks/targets.json, which the build also puts into this jar) is the only
 * place a target's number is written. A report judges by the file in its own folder when there is
 * one, else by the built-in copy.
 *
 * <pre>{@code
 * BenchmarkTargets t = BenchmarkTargets.forFolder(Path.of("docs/benchmarks"));
 * t.gemm().minRatioToCublas();                         // 0.95
 * t.gemmSuite().minRatio();                            // 0.9
 * t.fused().speedup("all_reduce", "4096x4096x4096");   // 1.5
 * t.moe().minRatio(512);                               // 1.5
 * t.trainingStep().minSpeedup();                       // 1.15
 * }</pre>
 *
 * @param about       what the file is, for a reader of the JSON
 * @param collectives targets A to F of the collectives report, in the order it lists them
 */
public record BenchmarkTargets(String about, Gemm gemm, GemmSuite gemmSuite, Attention attention, Rma rma,
                               List<CclTargets.Spec> collectives, Fused fused, Moe moe, TrainingStep trainingStep) {
    public static final String FILE = "targets.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The GEMM report's target: Iris at least this many times cuBLAS's TFLOP/s on every shape. */
    public record Gemm(String source, double minRatioToCublas) {}

    /**
     * The GEMM suite report's targets (gemm-suite.md): Iris at least {@code minRatio} times the
     * strongest baseline's TFLOP/s on every shape of the suite, and at least {@code minRatioGeomean}
     * times as the geometric mean over the shapes.
     */
    public record GemmSuite(String source, double minRatio, double minRatioGeomean) {}

    /**
     * The attention report's targets: the local kernel against PyTorch SDPA's fastest backend, ring
     * attention against the same work without communication and against all-gather + local, its
     * K/V bytes per rank in shards (the own one and at most two receive buffers, whatever the
     * world), flash-decode against partial + all-gather + combine.
     */
    public record Attention(String source, double localMinRatioToSdpa, double ringMaxRatioToNoCommunication,
                            double ringMaxRatioToAllGather, double ringMaxKvShards, double decodeMinSpeedup, DecodeFloor decodeFloor) {}

    /**
     * Flash-decode judged by its floor (issue 30): fused time ≤ {@code factor} x (K/V bytes per rank ÷
     * the HBM copy bandwidth measured in the same run) + {@code addUs}.
     */
    public record DecodeFloor(double factor, double addUs) {
        /** The bound in µs for {@code floorUs}, the K/V bytes' time at the copy bandwidth. */
        public double boundUs(double floorUs) {
            return factor * floorUs + addUs;
        }
    }

    /**
     * The RMA report's targets: SM-driven bandwidth against the copy engine at one size, the
     * message-passing round trip, the Java-side launch cost and the barrier.
     */
    public record Rma(double copyEngineFraction, String bandwidthAt, double roundTripMaxUs, double launchMaxUs,
                      double barrierMaxUs) {
        /** The size the bandwidth target is stated at. */
        public long bandwidthBytes() {
            return SizeList.parse(bandwidthAt);
        }
    }

    /**
     * The fused report's targets: speedup over cuBLAS then NCCL per "op MxNxK", stated for {@code
     * world} ranks; and at small M, {@link SmallM}.
     */
    public record Fused(String source, int world, Map<String, Double> speedups, SmallM smallM) {
        /** The target speedup, or NaN where none is stated. */
        public double speedup(String op, String shape) {
            return speedups.getOrDefault(op + " " + shape, Double.NaN);
        }
    }

    /**
     * The fused report's small-M targets: at every M up to {@code maxM}, the fused kernel at least
     * {@code minOverNccl} times as fast as cuBLAS then NCCL, and {@code minOverIris} times as fast as
     * cuBLAS then the library's own collective (the one-shot all-reduce at these sizes).
     */
    public record SmallM(String source, int maxM, double minOverNccl, double minOverIris) {
        /** Whether a shape of {@code m} rows is judged. */
        public boolean judges(int m) {
            return m <= maxM;
        }
    }

    /**
     * The MoE report's targets, for dispatch and for combine each: the library at least
     * {@code minRatioSmall} times NCCL all-to-all-v's speed (NCCL's time ÷ the library's) at every
     * T up to {@code smallTokens} tokens per rank, and at least {@code minRatioLarge} times at
     * {@code largeTokens}; and the expert layer, fused, at least {@code minLayerSpeedup} times as
     * fast as dispatch, the grouped GEMM and combine in sequence.
     */
    public record Moe(String source, int smallTokens, double minRatioSmall, int largeTokens, double minRatioLarge,
                      double minLayerSpeedup) {
        /** The ratio to reach at T tokens per rank, NaN where none is stated. */
        public double minRatio(int tokens) {
            return tokens <= smallTokens ? minRatioSmall : tokens == largeTokens ? minRatioLarge : Double.NaN;
        }
    }

    /**
     * The training-step report's target: forward + backward of the tensor-parallel MLP with the
     * fused operations at least {@code minSpeedup} times as fast as the same step with cuBLAS then
     * NCCL in sequence (the baseline's time ÷ the fused step's), stated for {@code world} ranks.
     */
    public record TrainingStep(String source, int world, double minSpeedup) {}

    /** Reads and checks a targets file. */
    public static BenchmarkTargets read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return parse(in, file.toString());
        }
    }

    /** The targets built into this jar from docs/benchmarks/targets.json. */
    public static BenchmarkTargets builtIn() {
        try (InputStream in = BenchmarkTargets.class.getResourceAsStream(FILE)) {
            if (in == null) {
                throw new IllegalStateException(FILE + " is not on the class path (iris-bench's build copies docs/benchmarks/" + FILE + ")");
            }
            return parse(in, "built-in " + FILE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code dir/targets.json} when the folder has one, else the built-in targets. */
    public static BenchmarkTargets forFolder(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        return Files.isRegularFile(file) ? read(file) : builtIn();
    }

    private static BenchmarkTargets parse(InputStream in, String name) throws IOException {
        BenchmarkTargets t = JSON.readValue(in, BenchmarkTargets.class);
        String missing = t.gemm == null ? "gemm" : t.gemmSuite == null ? "gemmSuite" : t.attention == null ? "attention" : t.rma == null ? "rma"
                : t.collectives == null ? "collectives" : t.fused == null || t.fused.speedups == null ? "fused" : t.moe == null ? "moe"
                : t.trainingStep == null ? "trainingStep" : null;
        if (missing != null) {
            throw new IOException(name + ": no \"" + missing + "\" targets");
        }
        return t;
    }

    /** The collectives target with this id. */
    public CclTargets.Spec collective(String id) {
        return collectives.stream().filter(s -> s.id().equals(id)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no collectives target " + id + " in " + FILE));
    }
}

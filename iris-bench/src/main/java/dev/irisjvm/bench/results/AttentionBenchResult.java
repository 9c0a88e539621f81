package dev.irisjvm.bench.results;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * One run of the attention benchmark ({@code dev.irisjvm.bench.attention.AttentionBench}) as it is
 * stored next to its report (raw JSON): where, with which command, and every measurement of its
 * three parts. Times are microseconds per call, the median of the timed calls; for work that spans
 * ranks, the largest of the ranks' medians (the job is as slow as its slowest rank).
 *
 * @param date     ISO date-time of the run (UTC)
 * @param hardware e.g. "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * @param software e.g. "CUDA 13.0 (driver 13.0), NCCL 2.28.3, Java 17.0.15"
 * @param command  the exact command that produced it
 * @param world    ranks (one GPU each)
 * @param warmup   untimed calls per point
 * @param sdpa     PyTorch SDPA on one GPU (the JSON of attention_sdpa.py, as read), or null
 * @param local    the single-GPU kernel, with implementation {@value #IRIS_PORTABLE} where the run measured it
 * @param ring     ring attention and its references
 * @param decode   flash-decode, fused, the conventional path and the all-partials path
 * @param hbmCopy  a device-to-device copy timed in the same run, the floor flash-decode is judged by;
 *                 null where the run had no decode part, or predates it
 */
public record AttentionBenchResult(String date, String hardware, String software, String command, int world, int warmup,
                                   Sdpa sdpa, List<LocalPoint> local, List<RingPoint> ring, List<DecodePoint> decode, HbmCopy hbmCopy)
        implements StoredResult {
    /**
     * A copy of {@code bytes} within each rank's GPU ({@code cudaMemcpyAsync} device to device), the
     * slowest rank's median: what the GPU's memory moves when it only streams.
     *
     * @param bytes the bytes copied (read once and written once)
     * @param us    median µs per copy, the slowest rank's
     */
    public record HbmCopy(long bytes, double us) {
        /** Bytes through HBM per second, reads and writes counted (2 x bytes ÷ time), in GB/s of 1e9 bytes. */
        public double gbps() {
            return 2.0 * bytes / (us * 1e3);
        }
    }

    /** The portable mainloop forced ({@code Attention.create(GemmMainloop.PORTABLE)}, AttentionBench --portable), whatever the GPU. */
    public static final String IRIS_PORTABLE = "iris-portable";

    /** The SDPA file of attention_sdpa.py. */
    public static Sdpa readSdpa(Path file) throws IOException {
        return StoredResult.readLenient(file, Sdpa.class);
    }

    /** PyTorch's SDPA run (field names as attention_sdpa.py writes them). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Sdpa(String torch, String cuda, String device, String dtype, int batch,
                       @JsonProperty("q_heads") int qHeads, @JsonProperty("kv_heads") int kvHeads,
                       @JsonProperty("head_dim") int headDim, int warmup, int reps, List<SdpaPoint> points) {}

    /**
     * One SDPA point: {@code backend} "default" (PyTorch's choice), "flash" or "cudnn"; {@code gqa}
     * "enable_gqa" or "expanded" (K and V repeated to the query heads); an error instead of a time
     * when the backend refused the shape.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record SdpaPoint(String backend, int seq, boolean causal, String gqa, int reps,
                            @JsonProperty("median_us") Double medianUs, @JsonProperty("min_us") Double minUs,
                            @JsonProperty("max_us") Double maxUs, Double tflops, String error) {}

    /**
     * The single-GPU kernel ({@code Attention.forward}) on one shape, on rank 0.
     *
     * @param tflops   4 B Hq S^2 D (halved when causal) / median
     * @param portable implementation {@value #IRIS_PORTABLE} on the same inputs; null when not measured (runs without
     *                 {@code --portable}, and every run before it)
     */
    public record LocalPoint(String dtype, int batch, int qHeads, int kvHeads, int seq, int headDim, boolean causal, int reps,
                             double medianUs, double minUs, double maxUs, double tflops, Portable portable) {}

    /**
     * Implementation {@value #IRIS_PORTABLE} on one local point, timed like the default one.
     *
     * @param tflops the local point's FLOPs / median
     * @param check  "ok" when its output was within the run's bound of the default implementation's, else what differed
     */
    public record Portable(int reps, double medianUs, double minUs, double maxUs, double tflops, String check) {
        public boolean checkPassed() {
            return check != null && check.startsWith("ok");
        }
    }

    /**
     * Ring attention on one total length and mask, with everything it is compared with.
     *
     * @param totalSeq         S, the whole sequence
     * @param shard            S / world, each rank's tokens
     * @param sharding         "ZIG_ZAG" or "CONTIGUOUS"
     * @param ringUs           RingAttention.forward, barriers and copies included
     * @param stepsUs          the same step kernels on local buffers, no communication
     * @param localUs          one local launch of the same per-rank work: Sq = S/W against Skv = S
     *                         (not causal), or the causal kernel on the whole sequence divided by world; 0 when not measured
     * @param allGatherUs      NCCL all-gather of K and V plus the local computation on the gathered K/V
     * @param gatherOnlyUs     the NCCL all-gather of K and V alone
     * @param ringKvBytes      K/V bytes per rank during ring attention (own shard + its receive buffers)
     * @param allGatherKvBytes K/V bytes per rank with the all-gather (own shard + the gathered K and V)
     * @param perRankTflops    per-rank FLOPs (the whole problem's / world) at the ring's time
     * @param check            how ring attention's output compared with the all-gather path's
     */
    public record RingPoint(String dtype, int batch, int qHeads, int kvHeads, int headDim, boolean causal, int totalSeq, int shard,
                            String sharding, int reps, double ringUs, double stepsUs, double localUs, double allGatherUs,
                            double gatherOnlyUs, long ringKvBytes, long allGatherKvBytes, double perRankTflops, String check) {
        /** The no-communication reference: the faster of the step kernels alone and the single launch. */
        public double noCommUs() {
            if (!(localUs > 0)) {
                return stepsUs;
            }
            return Math.min(stepsUs, localUs);
        }
    }

    /**
     * Flash-decode on one batch and KV length: the fused kernel against the conventional unfused
     * decode (the baseline of the target) and against the all-partials path. Runs before the
     * conventional path was measured have no {@code conventional} (null) and call the all-partials
     * time "baselineUs", read here as {@code allPartialsUs}.
     *
     * @param totalLen      KV tokens per sequence over all ranks
     * @param lenPerRank    this rank's tokens per sequence (totalLen / world)
     * @param fusedUs       FlashDecode.forward: the fused kernel
     * @param conventional  FlashDecode.conventional and its steps; null when not measured
     * @param allPartialsUs FlashDecode.baseline: partial kernel, NCCL all-gather of every chunk's partial, combine kernel
     * @param partialUs     the partial kernel alone
     * @param gatherUs      the NCCL all-gather of the partials alone (0 when not measured)
     * @param combineUs     the combine kernel over every rank's partials alone
     * @param check         "ok" when the fused output equalled the all-partials path's bit for bit, else what differed
     */
    public record DecodePoint(String dtype, int batch, int qHeads, int kvHeads, int headDim, long totalLen, int lenPerRank,
                              int chunkLen, int chunks, int reps, double fusedUs, Conventional conventional,
                              @JsonAlias("baselineUs") double allPartialsUs, double partialUs, double gatherUs, double combineUs,
                              String check) {
        /** The conventional path's time over the fused kernel's; NaN when either was not measured. */
        public double speedup() {
            return conventional != null && fusedUs > 0 ? conventional.us() / fusedUs : Double.NaN;
        }

        /** The all-partials path's time over the fused kernel's. */
        public double allPartialsSpeedup() {
            return fusedUs > 0 ? allPartialsUs / fusedUs : Double.NaN;
        }

        /** The K and V bytes this rank's partial pass reads ({@link #kvBytes}). */
        public long kvBytesPerRank() {
            return kvBytes(batch, kvHeads, lenPerRank, headDim, "f32".equals(dtype) ? 4 : 2);
        }

        /** K and V of {@code tokens} per sequence: 2 x batch x K/V heads x tokens x head size x element bytes. */
        public static long kvBytes(int batch, int kvHeads, long tokens, int headDim, int elementBytes) {
            return 2L * batch * kvHeads * tokens * headDim * elementBytes;
        }

        /** Whether every output check of the point passed. */
        public boolean checksPassed() {
            return check != null && check.startsWith("ok") && (conventional == null || conventional.checkPassed());
        }
    }

    /**
     * The conventional unfused decode on one point ({@code FlashDecode.conventional}): this rank's
     * partials merged into one entry per query head, one entry per head and rank all-gathered, then
     * combined.
     *
     * @param us        partial kernel, merge kernel, NCCL all-gather of the merged entries, combine kernel
     * @param mergeUs   the merge kernel alone
     * @param gatherUs  the NCCL all-gather of the merged entries alone (0 when not measured)
     * @param combineUs the combine kernel over every rank's merged entries alone
     * @param check     "ok" when its output was within the run's bound of the fused kernel's, else what differed
     */
    public record Conventional(double us, double mergeUs, double gatherUs, double combineUs, String check) {
        public boolean checkPassed() {
            return check != null && check.startsWith("ok");
        }
    }
}

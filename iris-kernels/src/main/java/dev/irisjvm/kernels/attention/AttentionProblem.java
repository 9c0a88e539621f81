package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Locale;

/**
 * The shapes of one attention forward, checked: {@code O = softmax(scale Q K^T [+ causal mask]) V}
 * with Q [batch, qHeads, qLen, headDim], K and V [batch, kvHeads, kvLen, headDim], O like Q, all
 * row-major 16-bit, and the log-sum-exp [batch, qHeads, qLen] in F32 (natural log). Query head h
 * reads K/V head {@code h / (qHeads / kvHeads)} (grouped-query attention; kvHeads == qHeads is
 * ordinary multi-head attention, kvHeads == 1 multi-query attention).
 *
 * <p>Creating one checks every rule of the kernels and throws {@link IllegalArgumentException}
 * naming the rank, the argument and what was expected: dtype BF16 or F16; headDim 64 or 128;
 * qLen and kvLen positive multiples of 128; qHeads a multiple of kvHeads; causal needs qLen ==
 * kvLen (key j is visible to query i when {@code j <= i}); scale positive. An instance is always
 * launchable.
 *
 * <pre>{@code
 * AttentionProblem p = AttentionProblem.of(DType.BF16, 1, 32, 8, 4096, 4096, 128, true);
 * p.kernelName();    // "iris_attention_fwd_bf16_d128_causal"
 * p.flops();         // 4 B Hq Sq Skv D / 2 (causal)
 * }</pre>
 *
 * <p>For {@link RingAttention} the same record describes one rank's shard (qLen = kvLen = the
 * shard's length); the mask then follows global positions (see {@link Sharding}).
 *
 * @param dtype   BF16 or F16, of Q, K, V and O
 * @param batch   sequences, 1 to 65535
 * @param qHeads  query heads, a multiple of kvHeads, at most 65535
 * @param kvHeads key/value heads
 * @param qLen    query rows per sequence, a multiple of 128
 * @param kvLen   key rows per sequence, a multiple of 128
 * @param headDim 64 or 128
 * @param causal  whether key j is hidden from query i when j > i
 * @param scale   softmax scale (usually {@code 1 / sqrt(headDim)}, {@link #defaultScale})
 */
public record AttentionProblem(DType dtype, int batch, int qHeads, int kvHeads, int qLen, int kvLen, int headDim,
                               boolean causal, double scale) {
    /** log2(e): the kernels work in base 2. */
    static final double LOG2E = 1.4426950408889634;

    public AttentionProblem {
        AttentionChecks.problem(dtype, batch, qHeads, kvHeads, qLen, kvLen, headDim, causal, scale);
    }

    /** A problem with the softmax scale {@code 1 / sqrt(headDim)}. */
    public static AttentionProblem of(DType dtype, int batch, int qHeads, int kvHeads, int qLen, int kvLen, int headDim,
                                      boolean causal) {
        return new AttentionProblem(dtype, batch, qHeads, kvHeads, qLen, kvLen, headDim, causal, defaultScale(headDim));
    }

    /** {@code 1 / sqrt(headDim)}. */
    public static double defaultScale(int headDim) {
        return 1.0 / Math.sqrt(headDim);
    }

    /** The same shapes with another mask. */
    public AttentionProblem withCausal(boolean c) {
        return new AttentionProblem(dtype, batch, qHeads, kvHeads, qLen, kvLen, headDim, c, scale);
    }

    /** The same problem with another key length (not causal unless equal to qLen). */
    public AttentionProblem withKvLen(int len) {
        return new AttentionProblem(dtype, batch, qHeads, kvHeads, qLen, len, headDim, causal, scale);
    }

    /** Query heads per K/V head. */
    public int groupSize() {
        return qHeads / kvHeads;
    }

    /** {@code scale * log2(e)}, the kernels' {@code scale_log2} argument. */
    public float scaleLog2() {
        return (float) (scale * LOG2E);
    }

    /** Rows of Q (and O) seen as a [rows, headDim] matrix: batch x qHeads x qLen. */
    public long qRows() {
        return (long) batch * qHeads * qLen;
    }

    /** Rows of K (and V) seen as a [rows, headDim] matrix: batch x kvHeads x kvLen. */
    public long kvRows() {
        return (long) batch * kvHeads * kvLen;
    }

    /** Bytes of Q, and of O. */
    public long qBytes() {
        return qRows() * headDim * dtype.byteSize();
    }

    /** Bytes of K, and of V. */
    public long kvBytes() {
        return kvRows() * headDim * dtype.byteSize();
    }

    /** Bytes of the log-sum-exp (F32, one per query row). */
    public long lseBytes() {
        return qRows() * 4;
    }

    /**
     * Floating-point operations by the usual convention: {@code 4 B Hq Sq Skv D} (two matrix
     * products), halved when causal (FlashAttention's and PyTorch's benchmark convention).
     */
    public double flops() {
        double full = 4.0 * batch * qHeads * (double) qLen * kvLen * headDim;
        return causal ? full / 2 : full;
    }

    /** {@code iris_attention_fwd_<bf16|f16>_d<64|128>[_causal]}. */
    public String kernelName() {
        return kernelName("iris_attention_fwd_", dtype, headDim, causal);
    }

    /** {@code iris_ring_attention_step_<bf16|f16>_d<64|128>[_causal]}. */
    public String ringStepKernelName() {
        return kernelName("iris_ring_attention_step_", dtype, headDim, causal);
    }

    /** {@code iris_ring_attention_last_steps_<bf16|f16>_d<64|128>[_causal]}. */
    public String ringLastStepsKernelName() {
        return kernelName("iris_ring_attention_last_steps_", dtype, headDim, causal);
    }

    /**
     * The forward kernel of {@code mainloop} (HOPPER or PORTABLE): {@link #kernelName()}, or {@code
     * iris_attention_fwd_portable_<bf16|f16>_d<64|128>[_causal]}.
     */
    public String kernelName(GemmMainloop mainloop) {
        return kernelName(FORWARD, mainloop, dtype, headDim, causal);
    }

    /**
     * The ring-step kernel of {@code mainloop}: {@link #ringStepKernelName()}, or {@code
     * iris_ring_attention_step_portable_<bf16|f16>_d<64|128>[_causal]}.
     */
    public String ringStepKernelName(GemmMainloop mainloop) {
        return kernelName(RING_STEP, mainloop, dtype, headDim, causal);
    }

    static final String FORWARD = "iris_attention_fwd_";
    static final String RING_STEP = "iris_ring_attention_step_";

    /** {@code prefix}, "portable_" on the portable mainloop, then the dtype, head size and mask. */
    static String kernelName(String prefix, GemmMainloop mainloop, DType dtype, int headDim, boolean causal) {
        return kernelName(mainloop == GemmMainloop.PORTABLE ? prefix + "portable_" : prefix, dtype, headDim, causal);
    }

    static String kernelName(String prefix, DType dtype, int headDim, boolean causal) {
        return prefix + dtype.name().toLowerCase(Locale.ROOT) + "_d" + headDim + (causal ? "_causal" : "");
    }

    /** Dynamic shared memory of the Hopper kernels: a Q tile, two stages of K and V tiles, 1 KiB for alignment. */
    public int sharedBytes() {
        return sharedBytes(GemmMainloop.HOPPER, headDim);
    }

    /**
     * Dynamic shared memory of the kernels of {@code mainloop} (HOPPER or PORTABLE) for this head
     * size: a Q tile and two stages of K and V tiles (128 keys on Hopper, 64 on the portable one).
     */
    public int sharedBytes(GemmMainloop mainloop) {
        return sharedBytes(mainloop, headDim);
    }

    static int sharedBytes(GemmMainloop mainloop, int headDim) {
        if (mainloop == GemmMainloop.PORTABLE) {
            return headDim == 64 ? KernelAbi.IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D64
                    : KernelAbi.IRIS_ATTENTION_PORTABLE_SHARED_BYTES_D128;
        }
        return headDim == 64 ? KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D64 : KernelAbi.IRIS_ATTENTION_SHARED_BYTES_D128;
    }

    /** The Hopper ring steps' launch: {@link #launchShape(GemmMainloop)} of HOPPER. */
    public LaunchShape launchShape() {
        return launchShape(GemmMainloop.HOPPER);
    }

    /**
     * The ring steps' launch, and the forward's but for Hopper's at head size 64 ({@link
     * #forwardLaunchShape}): grid (qLen / 128, qHeads, batch), as both mainloops cover 128 query rows
     * a block, of {@value Attention#THREADS} threads on Hopper or {@value Attention#PORTABLE_THREADS}
     * on the portable mainloop, with {@link #sharedBytes(GemmMainloop)}.
     */
    public LaunchShape launchShape(GemmMainloop mainloop) {
        int threads = mainloop == GemmMainloop.PORTABLE ? Attention.PORTABLE_THREADS : Attention.THREADS;
        return new LaunchShape(qLen / AttentionChecks.TILE, qHeads, batch, threads, 1, 1, sharedBytes(mainloop));
    }

    /**
     * The forward kernel's launch on {@code mainloop}. Hopper's at head size 64 covers {@value
     * Attention#WIDE_ROWS} query rows a block with three consumer warpgroups: grid (ceil(qLen /
     * {@value Attention#WIDE_ROWS}), qHeads, batch) of {@value Attention#WIDE_THREADS} threads and
     * {@value Attention#WIDE_SHARED_BYTES} bytes of shared memory. Every other forward launches as
     * {@link #launchShape(GemmMainloop)}.
     */
    public LaunchShape forwardLaunchShape(GemmMainloop mainloop) {
        if (!wideForward(mainloop, headDim)) {
            return launchShape(mainloop);
        }
        return new LaunchShape((qLen + Attention.WIDE_ROWS - 1) / Attention.WIDE_ROWS, qHeads, batch,
                Attention.WIDE_THREADS, 1, 1, forwardSharedBytes(mainloop, headDim));
    }

    /** Dynamic shared memory of the forward kernel of {@code mainloop} at {@code headDim}. */
    static int forwardSharedBytes(GemmMainloop mainloop, int headDim) {
        return wideForward(mainloop, headDim) ? Attention.WIDE_SHARED_BYTES : sharedBytes(mainloop, headDim);
    }

    /** Whether the forward kernel takes wide query tiles: Hopper's at IRIS_ATTENTION_WIDE_HEAD_DIM (abi/attention.h). */
    private static boolean wideForward(GemmMainloop mainloop, int headDim) {
        return mainloop == GemmMainloop.HOPPER && headDim == KernelAbi.IRIS_ATTENTION_WIDE_HEAD_DIM;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "AttentionProblem(%s, B %d, Hq %d, Hkv %d, Sq %d, Skv %d, D %d%s, scale %.6g)", dtype,
                batch, qHeads, kvHeads, qLen, kvLen, headDim, causal ? ", causal" : "", scale);
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Locale;

/**
 * The shapes of one distributed flash-decode call, checked: one new query token per sequence, q
 * [batch, qHeads, headDim], attending to a KV cache split across the ranks, this rank holding
 * {@code len} tokens of every sequence, k and v [batch, kvHeads, len, headDim]; o [batch, qHeads,
 * headDim] is the attention over every rank's tokens, on every rank. The keys are cut into chunks of
 * {@code chunkLen}; one CTA per (chunk, K/V head, sequence) writes a partial (un-normalized output,
 * max, sum) per query head, and the partials of all ranks are combined (the conventional path first
 * merges each rank's partials into one entry per query head, and combines those).
 *
 * <p>Rules (checked here, {@link IllegalArgumentException} naming the rank and the argument): BF16
 * or F16; headDim 64 or 128; qHeads a multiple of kvHeads with at most {@value
 * AttentionChecks#MAX_DECODE_GROUP} query heads per K/V head; chunkLen a multiple of 64, at most
 * 1024; batch and kvHeads at most 65535. Every rank holds the same {@code len} (the partials'
 * layout depends on the number of chunks).
 *
 * <pre>{@code
 * FlashDecodeProblem p = FlashDecodeProblem.of(DType.BF16, 8, 32, 8, 128, 65536, 512);
 * p.chunks();         // 128
 * p.slotFloats();     // 8 x 8 x 128 x 4 x 132: one rank's partials
 * p.mergedFloats();   // 8 x 32 x 132: one rank's merged entries, one per query head
 * }</pre>
 *
 * @param dtype    BF16 or F16, of q, k, v and o
 * @param batch    sequences
 * @param qHeads   query heads, a multiple of kvHeads
 * @param kvHeads  key/value heads
 * @param headDim  64 or 128
 * @param len      this rank's tokens per sequence, >= 1 (the same on every rank)
 * @param chunkLen keys per CTA, a multiple of 64 in [64, 1024]
 * @param scale    softmax scale, usually 1 / sqrt(headDim)
 */
public record FlashDecodeProblem(DType dtype, int batch, int qHeads, int kvHeads, int headDim, int len, int chunkLen,
                                 double scale) {
    public FlashDecodeProblem {
        String op = "flash decode";
        AttentionChecks.dtype(op, dtype);
        AttentionChecks.batch(op, batch);
        AttentionChecks.heads(op, qHeads, kvHeads);
        AttentionChecks.headDim(op, headDim);
        AttentionChecks.positive(op, "len", len);
        if (qHeads / kvHeads > AttentionChecks.MAX_DECODE_GROUP) {
            throw AttentionChecks.fail(op, "qHeads / kvHeads = " + qHeads / kvHeads + " query heads per K/V head exceed "
                    + AttentionChecks.MAX_DECODE_GROUP + " (the kernel keeps a group's queries in shared memory)");
        }
        if (chunkLen < AttentionChecks.DECODE_CHUNK_MULTIPLE || chunkLen > AttentionChecks.MAX_DECODE_CHUNK
                || chunkLen % AttentionChecks.DECODE_CHUNK_MULTIPLE != 0) {
            throw AttentionChecks.fail(op, "chunkLen = " + chunkLen + " must be a multiple of " + AttentionChecks.DECODE_CHUNK_MULTIPLE
                    + " in [" + AttentionChecks.DECODE_CHUNK_MULTIPLE + ", " + AttentionChecks.MAX_DECODE_CHUNK + "] (keys per CTA)");
        }
        AttentionChecks.scale(op, scale);
        long kvElements = (long) batch * kvHeads * len * headDim;
        if (kvElements < 0 || (long) batch * kvHeads * len > Integer.MAX_VALUE) {
            throw AttentionChecks.fail(op, "batch x kvHeads x len = " + (long) batch * kvHeads * len + " K/V rows exceed 2^31 - 1");
        }
    }

    /** A problem with the softmax scale 1 / sqrt(headDim). */
    public static FlashDecodeProblem of(DType dtype, int batch, int qHeads, int kvHeads, int headDim, int len, int chunkLen) {
        return new FlashDecodeProblem(dtype, batch, qHeads, kvHeads, headDim, len, chunkLen, AttentionProblem.defaultScale(headDim));
    }

    /**
     * CTAs of the flash-decode kernels resident on one SM of an H200 (128 threads, at most 96
     * registers per thread and 44 KiB of shared memory): what a "wave" of CTAs is in {@link #defaultChunkLen}.
     */
    static final int RESIDENT_CTAS_PER_SM = KernelAbi.IRIS_FLASH_DECODE_BLOCKS_PER_SM;

    /**
     * What a CTA's fixed work (its queries, the softmax, writing its partial) costs, in keys, in
     * {@link #defaultChunkLen}'s estimate.
     */
    static final int CTA_OVERHEAD_KEYS = 64;

    /**
     * What combining one more chunk's partials costs, in keys of the partial pass, in {@link
     * #defaultChunkLen}'s estimate: on 2 x H200 the combine of 316 chunks per head took 45 µs, as
     * long as about 430 key-steps of the partial pass.
     */
    static final int COMBINE_KEYS_PER_CHUNK = 2;

    /**
     * A chunk length for {@code len} tokens per rank: the multiple of 64 in [64, 1024] with the
     * fewest estimated key-steps, that is waves of resident CTAs ({@value #RESIDENT_CTAS_PER_SM}
     * per SM) times keys per CTA plus a CTA's fixed work, plus the combine's cost per chunk; ties go
     * to the longer chunk. The pass is memory-bound, so a last wave that fills a fraction of the
     * GPU leaves that fraction of HBM bandwidth unused: on 2 × H200 at 128K tokens per rank, 832
     * keys (1.9 waves of 660 CTAs) ran the decode in 219 µs against 248 µs with 1024 keys (1.55
     * waves).
     */
    public static int defaultChunkLen(int batch, int kvHeads, int len, int multiprocessors) {
        long slots = (long) RESIDENT_CTAS_PER_SM * Math.max(1, multiprocessors);
        long heads = (long) batch * kvHeads;
        int best = AttentionChecks.DECODE_CHUNK_MULTIPLE;
        long bestCost = Long.MAX_VALUE;
        int step = AttentionChecks.DECODE_CHUNK_MULTIPLE;
        for (int c = step; c <= AttentionChecks.MAX_DECODE_CHUNK; c += step) {
            long chunks = (len + c - 1) / c;
            long ctas = heads * chunks;
            long cost = (ctas + slots - 1) / slots * (c + CTA_OVERHEAD_KEYS) + COMBINE_KEYS_PER_CHUNK * chunks;
            if (cost <= bestCost) {
                best = c;
                bestCost = cost;
            }
            if (c >= len) {
                break;  // longer chunks only add keys past the end
            }
        }
        return best;
    }

    /** The same problem with another per-rank length. */
    public FlashDecodeProblem withLen(int tokens) {
        return new FlashDecodeProblem(dtype, batch, qHeads, kvHeads, headDim, tokens, chunkLen, scale);
    }

    /** Query heads per K/V head. */
    public int group() {
        return qHeads / kvHeads;
    }

    /** Chunks per (sequence, K/V head): ceil(len / chunkLen). */
    public int chunks() {
        return (len + chunkLen - 1) / chunkLen;
    }

    /** Floats of one rank's partials: batch x kvHeads x chunks x group x (headDim + 4) (iris/abi/flash_decode.h's layout). */
    public long slotFloats() {
        return (long) batch * kvHeads * chunks() * group() * (headDim + KernelAbi.IRIS_FLASH_DECODE_PARTIAL_EXTRA);
    }

    /**
     * Floats of one rank's merged entries: batch x qHeads x (headDim + 4), one per query head, laid
     * out as a slot of one chunk ([B][Hkv][1][G][D + 4], iris/abi/flash_decode.h): what the
     * conventional path all-gathers, {@link #chunks()} times fewer floats than {@link #slotFloats()}.
     */
    public long mergedFloats() {
        return (long) batch * qHeads * (headDim + KernelAbi.IRIS_FLASH_DECODE_PARTIAL_EXTRA);
    }

    /** {@code scale * log2(e)}. */
    public float scaleLog2() {
        return (float) (scale * AttentionProblem.LOG2E);
    }

    /** Bytes of q, and of o. */
    public long qBytes() {
        return (long) batch * qHeads * headDim * dtype.byteSize();
    }

    /** Bytes of this rank's k, and of its v. */
    public long kvBytes() {
        return (long) batch * kvHeads * len * headDim * dtype.byteSize();
    }

    /**
     * {@code iris_flash_decode_<bf16|f16>_d<D>}, {@code ..._partial_...}, {@code ..._combine_...};
     * the merge, F32 only, is {@code iris_flash_decode_merge_d<D>}.
     */
    public String kernelName() {
        return kernelName("iris_flash_decode_", dtype, headDim);
    }

    public String partialKernelName() {
        return kernelName("iris_flash_decode_partial_", dtype, headDim);
    }

    public String combineKernelName() {
        return kernelName("iris_flash_decode_combine_", dtype, headDim);
    }

    public String mergeKernelName() {
        return mergeKernelName(headDim);
    }

    static String mergeKernelName(int headDim) {
        return "iris_flash_decode_merge_d" + headDim;
    }

    static String kernelName(String prefix, DType dtype, int headDim) {
        return prefix + dtype.name().toLowerCase(Locale.ROOT) + "_d" + headDim;
    }

    /** The fused and partial kernels' grid: (chunks, kvHeads, batch) of 128 threads. */
    public LaunchShape launchShape() {
        return new LaunchShape(chunks(), kvHeads, batch, FlashDecode.THREADS, 1, 1, 0);
    }

    /** The merge and combine kernels' grid: (kvHeads, batch, group) of 128 threads, a CTA per query head. */
    public LaunchShape combineLaunchShape() {
        return new LaunchShape(kvHeads, batch, group(), FlashDecode.THREADS, 1, 1, 0);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "FlashDecodeProblem(%s, B %d, Hq %d, Hkv %d, D %d, len %d per rank, chunks of %d, scale %.6g)",
                dtype, batch, qHeads, kvHeads, headDim, len, chunkLen, scale);
    }
}

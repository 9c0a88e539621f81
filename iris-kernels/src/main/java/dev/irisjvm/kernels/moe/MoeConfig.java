package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * The shape of one MoE layer's token exchange, the same on every rank: what {@link MoeDispatch}
 * allocates for, once.
 *
 * <pre>{@code
 * // 64 experts, top-2, up to 4096 tokens per rank, room for 1.25x an even share per expert
 * int world = iris.node().size();
 * MoeConfig c = MoeConfig.of(4096, 64, 2, 4096, MoeConfig.capacityFor(1.25, 4096, 2, 64, world));
 * MoeConfig lenient = c.withPolicy(OverflowPolicy.DROP);
 * }</pre>
 *
 * @param hidden    elements per token row (H), a multiple of 8 (rows move in 16-byte pieces)
 * @param experts   experts of the layer (E), across all ranks of the node: rank r holds experts
 *                  [r E / world, (r + 1) E / world); at most {@link #MAX_EXPERTS}
 * @param topK      experts per token (k), in [1, experts]
 * @param maxTokens most tokens one rank dispatches in one call (T); maxTokens * topK routes fit an int
 * @param capacity  rows each expert's receive buffer holds (per local expert), at least 1
 * @param policy    what happens to a route whose expert is full ({@link OverflowPolicy})
 * @param dtype     the element type of tokens and expert outputs: {@link DType#BF16} (the only one so far)
 */
public record MoeConfig(int hidden, int experts, int topK, int maxTokens, int capacity, OverflowPolicy policy, DType dtype) {
    /** Most experts of a layer (IRIS_MOE_MAX_EXPERTS). */
    public static final int MAX_EXPERTS = KernelAbi.IRIS_MOE_MAX_EXPERTS;

    public MoeConfig {
        if (hidden < 8 || hidden % 8 != 0) {
            throw new IllegalArgumentException("MoeConfig: hidden is " + hidden + "; expected a positive multiple of 8"
                    + " (token rows move in 16-byte pieces)");
        }
        if (experts < 1 || experts > MAX_EXPERTS) {
            throw new IllegalArgumentException("MoeConfig: experts is " + experts + "; expected 1 to " + MAX_EXPERTS);
        }
        if (topK < 1 || topK > experts) {
            throw new IllegalArgumentException("MoeConfig: topK is " + topK + "; expected 1 to experts (" + experts + ")");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("MoeConfig: maxTokens is " + maxTokens + "; expected at least 1");
        }
        if ((long) maxTokens * topK > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("MoeConfig: maxTokens " + maxTokens + " x topK " + topK + " = "
                    + (long) maxTokens * topK + " routes; expected at most " + Integer.MAX_VALUE + " (routes are int32)");
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("MoeConfig: capacity is " + capacity + "; expected at least 1 row per expert");
        }
        if (policy == null) {
            throw new IllegalArgumentException("MoeConfig: policy must not be null");
        }
        if (dtype != DType.BF16) {
            throw new IllegalArgumentException("MoeConfig: dtype is " + dtype + "; expected BF16 (the only element type so far)");
        }
    }

    /** BF16, policy FAIL. */
    public static MoeConfig of(int hidden, int experts, int topK, int maxTokens, int capacity) {
        return new MoeConfig(hidden, experts, topK, maxTokens, capacity, OverflowPolicy.FAIL, DType.BF16);
    }

    /**
     * Rows per expert for a capacity factor: {@code ceil(factor * world * maxTokens * topK / experts)},
     * the factor times an even share of every rank's routes, at least 1. A factor of
     * {@code experts / topK} (every route of every rank on one expert) never overflows.
     */
    public static int capacityFor(double capacityFactor, int maxTokens, int topK, int experts, int world) {
        if (!(capacityFactor > 0) || Double.isInfinite(capacityFactor)) {
            throw new IllegalArgumentException("MoeConfig.capacityFor: capacityFactor is " + capacityFactor
                    + "; expected a positive finite number");
        }
        if (maxTokens < 1 || topK < 1 || experts < 1 || world < 1) {
            throw new IllegalArgumentException("MoeConfig.capacityFor: maxTokens " + maxTokens + ", topK " + topK
                    + ", experts " + experts + ", world " + world + "; expected all at least 1");
        }
        double rows = Math.ceil(capacityFactor * world * (double) maxTokens * topK / experts);
        if (rows > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("MoeConfig.capacityFor: " + rows + " rows per expert do not fit an int");
        }
        return Math.max(1, (int) rows);
    }

    public MoeConfig withPolicy(OverflowPolicy p) {
        return new MoeConfig(hidden, experts, topK, maxTokens, capacity, p, dtype);
    }

    public MoeConfig withCapacity(int rows) {
        return new MoeConfig(hidden, experts, topK, maxTokens, rows, policy, dtype);
    }

    /** Routes (token, k) of one rank at most: maxTokens * topK. */
    public long maxRoutes() {
        return (long) maxTokens * topK;
    }
}

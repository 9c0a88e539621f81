package dev.irisjvm.kernels.fused;

/**
 * Who moves a finished tile to the other ranks in a fused kernel.
 *
 * <ul>
 * <li>{@link #EPILOGUE}: the consumer warpgroups' epilogue stores every finished piece straight
 *     into the peers' memory (the all-scatter source calls this kernel "sequential", the
 *     reductions "epilogue"). No handoff, but the tensor cores wait while remote stores drain.</li>
 * <li>{@link #SPARE_WARPS}: the epilogue stores locally and hands the tile to the three otherwise
 *     idle warps of the producer warpgroup, which copy it to the peers while the consumers go on
 *     with the next tile. All-gather + GEMM has only this variant: the spare warps push this rank's
 *     rows of A into the peers.</li>
 * <li>{@link #AUTO}: {@link #choose} picks one per operation and shape when the instance is created.</li>
 * </ul>
 */
public enum FusedVariant {
    AUTO,
    EPILOGUE,
    SPARE_WARPS;

    /**
     * The variant AUTO stands for, from docs/benchmarks/fused.md ({@code bin/bench-fused}: every
     * variant per shape, same run; four runs on 2 x H200 agree): all-scatter takes EPILOGUE (the
     * kernel "sequential"; its spare-warp variant was 1.4-7x slower at both shapes), all-reduce,
     * reduce-scatter and all-gather SPARE_WARPS (7-11% faster than the epilogue variant at both
     * all-reduce shapes, 6-22% at both reduce-scatter shapes). Keep it one small function of the
     * operation and the shape.
     *
     * @param m     the kernel's M
     * @param n     the kernel's N (all-scatter: this rank's columns)
     * @param k     the kernel's K (the reductions: this rank's share of K)
     * @param world ranks
     */
    public static FusedVariant choose(FusedOp op, long m, long n, long k, int world) {
        return switch (op) {
            case ALL_SCATTER -> EPILOGUE;
            case ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER -> SPARE_WARPS;
        };
    }

    /** This variant for that operation and shape: itself, or what {@link #choose} makes of AUTO. */
    public FusedVariant resolve(FusedOp op, long m, long n, long k, int world) {
        return this == AUTO ? choose(op, m, n, k, world) : this;
    }

    /**
     * The variant's name in the kernel names and in benchmark results: "sequential" (all-scatter's
     * EPILOGUE), "epilogue", "spare_warps", or "auto".
     */
    public String kernelName(FusedOp op) {
        return switch (this) {
            case AUTO -> "auto";
            case EPILOGUE -> op == FusedOp.ALL_SCATTER ? "sequential" : "epilogue";
            case SPARE_WARPS -> "spare_warps";
        };
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmMainloop;

/**
 * Who moves a finished tile to the other ranks in a fused kernel.
 *
 * <ul>
 * <li>{@link #EPILOGUE}: the consumer warpgroups' epilogue stores every finished piece straight
 *     into the peers' memory. No handoff, but the tensor cores wait while remote stores drain. The
 *     only variant of the portable kernels ({@link dev.irisjvm.kernels.gemm.GemmMainloop#PORTABLE}),
 *     all-gather + GEMM's included: there every block pushes its share of this rank's rows of A
 *     into the peers, then computes.</li>
 * <li>{@link #SPARE_WARPS}: the epilogue stores locally and hands the tile to the three otherwise
 *     idle warps of the producer warpgroup, which copy it to the peers while the consumers go on
 *     with the next tile. All-gather + GEMM's kernel has only this variant: the spare warps push this rank's
 *     rows of A into the peers.</li>
 * <li>{@link #UNFUSED} (every operation but all-scatter): no fused kernel; the library's {@link
 *     Gemm} and {@link dev.irisjvm.kernels.ccl.Collectives} in sequence. For the reductions the GEMM
 *     computes this rank's partial, then the collective sums it over the ranks (an all-reduce of C
 *     in place; a reduce-scatter of the partial into C): two launches, where the fused kernel runs
 *     each 128 x 256 tile over the whole of K on one SM and so, with few tiles, leaves most SMs idle
 *     ({@link Gemm} shares such tiles out by K). A reduction's call whose C has columns past N
 *     (ldc &gt; N), which the collective would overwrite, runs the kernel of {@link #kernels}. For
 *     all-gather + GEMM an in-place all-gather of A, then the GEMM: it takes rows per rank that are
 *     not whole 128-row tiles, which the kernel cannot split.</li>
 * <li>{@link #AUTO}: {@link #choose} picks one per operation and shape when the instance is created.</li>
 * </ul>
 */
public enum FusedVariant {
    AUTO,
    EPILOGUE,
    SPARE_WARPS,
    UNFUSED;

    /**
     * The variant AUTO stands for, from docs/benchmarks/fused.md ({@code bin/bench-fused}: every
     * variant per shape, same run, 2 x H200): SPARE_WARPS, except for an all-scatter whose tiles do
     * not outnumber the SMs. The spare warps pay off when a consumer has a next tile to compute
     * while its last one is sent: all-scatter's spare warps were 1-5% faster from 4096^3 to
     * 16384 x 8192 x 4096 and at 8192 x 4608 x 36864 (two to fifteen waves), and 2-9% slower at
     * 2048^3 and 1024 x 3584 x 8192 (one wave or less), where the sequential kernel's epilogue
     * sends each tile without a hand-off. The reductions' spare warps are 7-15% faster at all four
     * of their shapes, and all-gather's kernel has no other variant. The reductions run UNFUSED where their
     * 128 x 256 tiles would occupy at most half of the SMs: on one H200 at Llama-3's row-parallel
     * shapes with 1 to 256 rows (64 tiles or fewer; docs/benchmarks/fused-small-m-world1-*.json), the
     * fused all-reduce took 77-143 µs where the library's GEMM then all-reduce took 24-88 (the
     * reduce-scatter is the same kernel, {@code gemm_reduce.cu}). All-gather's kernel shares few
     * tiles out by K instead ({@link FusedOp#splitK}): 1.29-1.31 x cuBLAS then NCCL at 1024 x 3584
     * x 8192 on 2 x H200 (fused-findings.md), so it keeps its kernel wherever that takes the rows.
     * Reduce-scatter and all-gather run UNFUSED where their rows are not whole tiles on every rank
     * ({@link FusedOp#kernelsTakeRows}). Keep it one small function of the operation and the shape.
     *
     * @param m               the kernel's M
     * @param n               the kernel's N (all-scatter: this rank's columns)
     * @param k               the kernel's K (the reductions: this rank's share of K)
     * @param world           ranks
     * @param multiprocessors the blocks the kernel runs (the GPU's SMs unless FusedConfig caps them)
     */
    public static FusedVariant choose(FusedOp op, long m, long n, long k, int world, int multiprocessors) {
        if (op == FusedOp.ALL_SCATTER) {
            long tiles = FusedWorkspace.tiles(m, n, op.tileN(m, n, multiprocessors));
            return tiles > multiprocessors ? SPARE_WARPS : EPILOGUE;
        }
        if (op.onlyUnfusedTakesRows(m, world) || op.reduces() && 2 * FusedWorkspace.tiles(m, n, Gemm.TILE_N) <= multiprocessors) {
            return UNFUSED;
        }
        return SPARE_WARPS;
    }

    /**
     * The variant whose kernels an instance of this one loads: itself, but for {@link #UNFUSED}, whose
     * reductions' calls with ldc &gt; N run {@link #SPARE_WARPS} (on the portable mainloop {@link
     * #EPILOGUE}).
     */
    public FusedVariant kernels(GemmMainloop mainloop) {
        if (this == AUTO) {
            throw new IllegalArgumentException("AUTO has no kernels: resolve it first");
        }
        return this != UNFUSED ? this : mainloop == GemmMainloop.PORTABLE ? EPILOGUE : SPARE_WARPS;
    }

    /**
     * This variant for that operation, mainloop (HOPPER or PORTABLE) and shape: itself, or what AUTO
     * stands for there: {@link #choose}'s answer on Hopper; on the portable mainloop {@link
     * #EPILOGUE}, its kernels' only variant, unless they cannot take the rows and the operation has
     * UNFUSED.
     */
    public FusedVariant resolve(FusedOp op, GemmMainloop mainloop, long m, long n, long k, int world, int multiprocessors) {
        if (this != AUTO) {
            return this;
        }
        if (mainloop != GemmMainloop.PORTABLE) {
            return choose(op, m, n, k, world, multiprocessors);
        }
        return op.onlyUnfusedTakesRows(m, world) ? UNFUSED : EPILOGUE;
    }

    /**
     * The variant's name in the kernel names and in benchmark results: "epilogue", "spare_warps",
     * "unfused" (in results only) or "auto". Benchmark results before {@code 2026-12-03} name
     * all-scatter's EPILOGUE "sequential".
     */
    public String kernelName() {
        return switch (this) {
            case AUTO -> "auto";
            case EPILOGUE -> "epilogue";
            case SPARE_WARPS -> "spare_warps";
            case UNFUSED -> "unfused";
        };
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmMainloop;

/**
 * Tuning of a fused GEMM + communication instance; every rank must pass the same one (creation
 * checks that). Output tiles are {@link Gemm#TILE_M} rows by a width the operation's kernels come
 * in ({@link FusedOp#tileWidths}), by default the one {@link FusedOp#tileN} picks for the shape; K
 * advances in steps of {@link Gemm#TILE_K}, one block of {@link Gemm#THREADS} threads per SM (a
 * producer warpgroup and two consumer warpgroups; on the portable mainloop {@value
 * FusedOp#PORTABLE_THREADS}, two groups of four warps).
 *
 * <pre>{@code
 * FusedConfig c = FusedConfig.defaults()                 // groupM 8, AUTO, no tracing, one block per SM
 *         .withVariant(FusedVariant.SPARE_WARPS)
 *         .withTracing(true)                             // the _traced kernels; read with traceRecords()
 *         .withSplitK(2);                                // all-gather + GEMM: two blocks per tile, half of K each
 * FusedConfig p = FusedConfig.defaults().withMainloop(GemmMainloop.PORTABLE);   // the mma.sync kernels, on Hopper too
 * }</pre>
 *
 * @param groupM    tile rows per group of the tile order (>= 1): a group's tiles are walked column
 *                  by column so that blocks running together share rows of A and columns of B in L2
 * @param variant   who moves finished tiles ({@link FusedVariant}); AUTO resolves per operation and
 *                  shape when the instance is created
 * @param tracing   run the {@code _traced} kernels, which record when every tile was computed and
 *                  communicated ({@link TileTrace}); off by default, and the untraced kernels
 *                  contain no tracing code at all
 * @param maxBlocks the most blocks (SMs) a call uses, 0 for one per SM; the SM split between this
 *                  operation and other work on the GPU
 * @param tileN     output columns per tile, one of the operation's {@link FusedOp#tileWidths}
 *                  (checked when the instance is created), or 0 for {@link FusedOp#tileN}'s choice
 * @param splitK    units of K per tile: 1, 2 (two blocks each run half of every tile's K loop and
 *                  add their halves; all-gather + GEMM only, {@link FusedOp#splitsK}), or 0 for
 *                  {@link FusedOp#splitK}'s choice
 * @param mainloop  which kernels run, as {@link GemmMainloop} says for the GEMM (AUTO: {@value
 *                  GemmMainloop#VARIABLE}, then the GPU): the Hopper ones, or the portable ones of
 *                  every GPU since Ampere, which have the EPILOGUE variant, 128 x {@value
 *                  Gemm#TILE_N} tiles, no split-K and no tracing (creation refuses a config that asks
 *                  for more there)
 */
public record FusedConfig(int groupM, FusedVariant variant, boolean tracing, int maxBlocks, int tileN, int splitK,
                          GemmMainloop mainloop) {
    /** The grouped tile order's default width, the GEMM's. */
    public static final int DEFAULT_GROUP_M = Gemm.DEFAULT_GROUP_M;

    public FusedConfig {
        if (groupM < 1) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: groupM must be >= 1 (tile rows per "
                    + "group of the tile order), got " + groupM);
        }
        if (variant == null) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: variant must not be null (AUTO, "
                    + "EPILOGUE or SPARE_WARPS)");
        }
        if (maxBlocks < 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: maxBlocks must be >= 0 (0: one block "
                    + "per SM), got " + maxBlocks);
        }
        if (tileN < 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: tileN must be >= 0 (0: chosen per "
                    + "shape), got " + tileN);
        }
        if (mainloop == null) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: mainloop must not be null (AUTO, "
                    + "HOPPER or PORTABLE)");
        }
        if (splitK < 0 || splitK > 2) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": FusedConfig: splitK must be 0 (chosen per shape), "
                    + "1 or 2, got " + splitK);
        }
    }

    /**
     * groupM {@value #DEFAULT_GROUP_M}, AUTO, tracing off, one block per SM, tile width and split-K
     * per shape, the mainloop by {@value GemmMainloop#VARIABLE} and GPU.
     */
    public static FusedConfig defaults() {
        return new FusedConfig(DEFAULT_GROUP_M, FusedVariant.AUTO, false, 0, 0, 0, GemmMainloop.AUTO);
    }

    public FusedConfig withGroupM(int rows) {
        return new FusedConfig(rows, variant, tracing, maxBlocks, tileN, splitK, mainloop);
    }

    public FusedConfig withVariant(FusedVariant v) {
        return new FusedConfig(groupM, v, tracing, maxBlocks, tileN, splitK, mainloop);
    }

    public FusedConfig withTracing(boolean on) {
        return new FusedConfig(groupM, variant, on, maxBlocks, tileN, splitK, mainloop);
    }

    public FusedConfig withMaxBlocks(int blocks) {
        return new FusedConfig(groupM, variant, tracing, blocks, tileN, splitK, mainloop);
    }

    public FusedConfig withTileN(int columns) {
        return new FusedConfig(groupM, variant, tracing, maxBlocks, columns, splitK, mainloop);
    }

    public FusedConfig withSplitK(int units) {
        return new FusedConfig(groupM, variant, tracing, maxBlocks, tileN, units, mainloop);
    }

    public FusedConfig withMainloop(GemmMainloop choice) {
        return new FusedConfig(groupM, variant, tracing, maxBlocks, tileN, splitK, choice);
    }
}

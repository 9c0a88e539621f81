package dev.irisjvm.kernels.gemm;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * How one GEMM launch spreads its tiles over the GPU (iris/gemm/stream_k.cuh): {@code grid}
 * persistent CTAs, the first tiles whole and round robin, the last {@code sharedTiles} shared out
 * by k-blocks over every CTA.
 *
 * <p>Tiles run whole where they fill their waves (at least {@value #WHOLE_WAVE_EFFICIENCY} of the
 * slots of the last wave busy). Otherwise the mostly empty last wave and the full wave before it
 * are shared out, so every CTA runs the same number of k-blocks, within one; with fewer tiles than
 * SMs every tile is shared. A CTA gets at least {@value KernelAbi#IRIS_GEMM_STREAM_K_MIN_BLOCKS}
 * k-blocks; with fewer tiles than SMs, stream-K runs only where that still puts more CTAs to work
 * than there are tiles, with more tiles only where every SM gets a share.
 *
 * @param grid        persistent CTAs of the launch
 * @param sharedTiles tiles shared out by K (0: every tile whole)
 */
record StreamKPlan(int grid, int sharedTiles) {
    /** The least share of the last wave's slots that whole tiles must fill. */
    static final double WHOLE_WAVE_EFFICIENCY = 0.9;

    /** Every tile whole on min(SMs, tiles) CTAs: the schedule without a workspace. */
    static StreamKPlan whole(long tiles, int multiprocessors) {
        return new StreamKPlan((int) Math.max(1, Math.min(multiprocessors, tiles)), 0);
    }

    /** The plan for {@code tiles} output tiles of {@code kBlocks} k-blocks each on {@code multiprocessors} SMs. */
    static StreamKPlan choose(long tiles, int kBlocks, int multiprocessors) {
        long waves = GemmChecks.ceilDiv(tiles, multiprocessors);
        StreamKPlan shared = (double) tiles / (waves * multiprocessors) >= WHOLE_WAVE_EFFICIENCY ? null
                : shared(tiles, kBlocks, multiprocessors);
        return shared == null ? whole(tiles, multiprocessors) : shared;
    }

    /**
     * The stream-K plan, however full the waves: every tile shared with fewer tiles than SMs, else
     * the last full wave and the partial one (a full wave when there is none); null where it would
     * not help (see the class notes) or its iterations overflow the kernel's int arithmetic.
     */
    static StreamKPlan shared(long tiles, int kBlocks, int multiprocessors) {
        long shared = tiles < multiprocessors ? tiles : tiles % multiprocessors + multiprocessors;
        long iterations = shared * kBlocks;
        int grid = (int) Math.min(multiprocessors, iterations / KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS);
        // Fewer tiles than SMs: worth it only with more CTAs than tiles; more: only on every SM.
        boolean useful = tiles < multiprocessors ? grid > tiles : grid == multiprocessors;
        return iterations > Integer.MAX_VALUE / 2 || !useful ? null : new StreamKPlan(grid, (int) shared);
    }

    /** Bytes of partials a launch of {@code grid} CTAs needs: two tiles of F32 per CTA. */
    static long partialBytes(int grid) {
        return (long) KernelAbi.IRIS_GEMM_STREAM_K_SLOTS_PER_CTA * grid * Gemm.TILE_M * Gemm.TILE_N * Float.BYTES;
    }

    /** Bytes of counters for up to {@code sharedTiles} shared tiles: one u32 per consumer warpgroup and tile. */
    static long counterBytes(int sharedTiles) {
        return 2L * sharedTiles * Integer.BYTES;
    }

    /** The most tiles any plan on {@code multiprocessors} SMs shares out: a partial wave and a full one. */
    static int maxSharedTiles(int multiprocessors) {
        return 2 * multiprocessors - 1;
    }
}

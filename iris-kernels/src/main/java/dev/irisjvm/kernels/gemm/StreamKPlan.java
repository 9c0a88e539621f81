package dev.irisjvm.kernels.gemm;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * How one GEMM launch spreads its tiles over the GPU (iris/gemm/stream_k.cuh): the kernel of
 * {@code tile}, {@code grid} persistent CTAs, the first tiles whole and round robin, the last
 * {@code sharedTiles} shared out by k-blocks over every CTA.
 *
 * <p>Three kinds of plan come out of that one kernel: every tile whole; split-K, every tile cut
 * into the same number of slices of K, one CTA per slice, so that the CTAs of neighbouring tiles
 * read the same k at the same time (the grid a multiple of the tiles); and stream-K, every CTA an
 * equal run of k-blocks across tile boundaries (with many tiles, only a mostly empty last wave and
 * the full wave before it), each in every tile the problem may take ({@link GemmTile#choices}).
 * {@link #choose} takes the one {@link ScheduleCost} estimates fastest. A CTA gets at least {@value
 * KernelAbi#IRIS_GEMM_STREAM_K_MIN_BLOCKS} k-blocks.
 *
 * <p>A clustered tile ({@link GemmTile#clustered}) plans the same way with a block of its tiles for a
 * tile and a cluster for a CTA: the kernel's units are blocks, each cluster runs one block at a time
 * (its CTAs on the block's tiles, in step over the same k-blocks), and {@code sharedTiles} counts
 * blocks ({@link #units}).
 *
 * @param tile        the output tile, and with it the kernel
 * @param grid        persistent CTAs of the launch (a multiple of the tile's cluster size)
 * @param sharedTiles units shared out by K (0: every unit whole): tiles, or a clustered tile's blocks
 */
record StreamKPlan(GemmTile tile, int grid, int sharedTiles) {
    /** The most CTAs that share a tile of a {@link #tail}. */
    static final int MAX_TAIL_CTAS_PER_TILE = 4;

    /** Every tile whole on min(SMs, tiles) CTAs: the schedule without a workspace. */
    static StreamKPlan whole(GemmTile tile, long tiles, int multiprocessors) {
        return new StreamKPlan(tile, (int) Math.max(1, Math.min(multiprocessors, tiles)), 0);
    }

    /**
     * {@code plan} in clusters of two where it runs whole tiles of 128 rows and the pairs take no
     * more waves than the tiles alone: a pair of vertically adjacent tiles per cluster, {@code 2
     * min(SMs / 2, pairs)} CTAs; any other plan as it is. In pairs, 128 x 128 tiles were faster than
     * alone on each of the twelve shapes GemmPlanTimes timed at commit {@code 404d74a}, by 5 to 10 %
     * (512 x 4096 x 4096: 25.1 µs against 27.3), as 128 x 256 tiles were
     * (docs/benchmarks/gemm-suite-findings.md). The waves: one row of 128 tiles fills a wave alone,
     * and in pairs would take two, every second CTA computing a tile past C.
     */
    static StreamKPlan paired(StreamKPlan plan, int m, int n, int multiprocessors) {
        if (plan.tile.rows() != Gemm.TILE_M || plan.tile.clustered() || plan.sharedTiles != 0) {
            return plan;
        }
        long pairs = GemmChecks.ceilDiv(GemmChecks.ceilDiv(m, plan.tile.rows()), 2) * GemmChecks.ceilDiv(n, plan.tile.cols());
        long waves = GemmChecks.ceilDiv(plan.tile.tiles(m, n), multiprocessors);
        return GemmChecks.ceilDiv(pairs, Math.max(1, multiprocessors / 2)) <= waves ? inPairs(plan, m, n, multiprocessors) : plan;
    }

    /**
     * {@code plan}'s whole tiles in clusters of two, a pair of vertically adjacent tiles per cluster
     * on {@code 2 min(SMs / 2, pairs)} CTAs ({@link GemmTile#inPairs}), or null where its tile has no
     * pairs or it shares tiles.
     */
    static StreamKPlan inPairs(StreamKPlan plan, int m, int n, int multiprocessors) {
        GemmTile pair = plan.sharedTiles != 0 ? null : plan.tile.inPairs();
        return pair == null ? null : whole(pair, m, n, multiprocessors);
    }

    /**
     * Every tile of an {@code m} x {@code n} C whole in {@code tile}; a clustered tile's on a grid of
     * whole clusters, a block of tiles per cluster, at most one CTA per SM.
     */
    static StreamKPlan whole(GemmTile tile, int m, int n, int multiprocessors) {
        int size = tile.clusterSize();
        return new StreamKPlan(tile, (int) (size * Math.max(1, Math.min(multiprocessors / size, tile.blocks(m, n)))), 0);
    }

    /** Every tile of an {@code m} x {@code n} C whole, in its first tile ({@link GemmTile#of}). */
    static StreamKPlan whole(int m, int n, int multiprocessors) {
        GemmTile tile = GemmTile.of(m);
        return whole(tile, tile.tiles(m, n), multiprocessors);
    }

    /**
     * The rule's plan for an {@code m} x {@code n} GEMM of {@code kBlocks} k-blocks with a workspace:
     * on {@code swapped} (see {@link GemmTile#swappedFor}; null for none) the plan {@link
     * ScheduleCost} estimates fastest among that tile's; else {@link #choose}'s.
     */
    static StreamKPlan rule(int m, int n, int kBlocks, int multiprocessors, GemmTile swapped, boolean pairs) {
        GemmTile[] tiles = swapped != null ? new GemmTile[] {swapped} : GemmTile.choices(m);
        return choose(tiles, m, n, kBlocks, multiprocessors, pairs, ScheduleCost::kBlockUs);
    }

    /**
     * Whether the rule runs tiles in pairs ({@link #paired}, and 64 x 128 tiles in pairs over a short
     * K) for a K of {@code k}: where K is not a multiple of 64, so that the rows of an M x K A and of
     * an N x K B are off the 128-byte swizzle row. GemmPlanTimes at {@code b5d43b2} (every plan of 34
     * shapes, docs/benchmarks/gemm-suite-findings.md): pairs were faster than the same tiles alone
     * only on the three shapes whose K is off 64 (2049 x 3000 x 2000: 128 x 256 tiles 0.79 of the
     * time alone; 1000 x 1000 x 1000: 64 x 128 tiles 0.82; 127 x 4104 x 1032: 0.98), and on the 31
     * others 0.997 (128 x 256) to 1.125 (64 x 128) of it as a geometric mean: 256 x 6144 x 4096 24.6
     * µs in pairs of 128 x 128 tiles against 23.4 alone, 128 x 8192 x 1024 8.28 against 7.81.
     */
    static boolean pairsPay(int k) {
        return k % Gemm.TILE_K != 0;
    }

    /**
     * The plan {@link ScheduleCost} estimates fastest for an {@code m} x {@code n} GEMM of {@code
     * kBlocks} k-blocks in the tiles it may take ({@link GemmTile#choices}), where {@code pairs}
     * ({@link #pairsPay}) in pairs if it runs whole tiles of 128 rows ({@link #paired}).
     */
    static StreamKPlan choose(int m, int n, int kBlocks, int multiprocessors, boolean pairs) {
        return choose(GemmTile.choices(m), m, n, kBlocks, multiprocessors, pairs, ScheduleCost::kBlockUs);
    }

    /** The same in {@code tiles}, by other k-block costs (ScheduleCostFit). */
    static StreamKPlan choose(GemmTile[] tiles, int m, int n, int kBlocks, int multiprocessors, boolean pairs, ToDoubleFunction<GemmTile> kBlockUs) {
        StreamKPlan fastest = candidates(tiles, m, n, kBlocks, multiprocessors, pairs, kBlockUs).get(0);
        return pairs ? paired(fastest, m, n, multiprocessors) : fastest;
    }

    /**
     * Every plan the shape can take, fastest by {@link ScheduleCost} first: in each tile it may take,
     * whole tiles, split-K into 2 or more slices while the slices fit on the SMs, and stream-K where
     * {@link #shared} allows it; where {@code pairs} ({@link #pairsPay}), whole 64 x 128 tiles in
     * pairs too over a short K, where they were measured faster than alone (see {@link
     * ScheduleCost#SHORT_PAIR_K_BLOCK_US}).
     */
    static List<StreamKPlan> candidates(int m, int n, int kBlocks, int multiprocessors, boolean pairs) {
        return candidates(GemmTile.choices(m), m, n, kBlocks, multiprocessors, pairs);
    }

    /** {@link #candidates(int, int, int, int, boolean)} in {@code choices} (GemmPlanTimes times every tile on every shape). */
    static List<StreamKPlan> candidates(GemmTile[] choices, int m, int n, int kBlocks, int multiprocessors, boolean pairs) {
        return candidates(choices, m, n, kBlocks, multiprocessors, pairs, ScheduleCost::kBlockUs);
    }

    /** The same, ordered by other k-block costs (ScheduleCostFit). */
    static List<StreamKPlan> candidates(GemmTile[] choices, int m, int n, int kBlocks, int multiprocessors, boolean pairs,
            ToDoubleFunction<GemmTile> kBlockUs) {
        List<StreamKPlan> plans = new ArrayList<>();
        for (GemmTile tile : choices) {
            long units = tile.blocks(m, n);
            int size = tile.clusterSize();
            if (pairs && tile == GemmTile.SHORT && kBlocks <= ScheduleCost.SHORT_PAIR_MAX_K_BLOCKS && m > tile.rows()) {
                plans.add(whole(GemmTile.SHORT_PAIR, m, n, multiprocessors));  // first: the estimate may tie (a memory floor)
            }
            plans.add(whole(tile, m, n, multiprocessors));
            for (long slices = 2; units * slices <= multiprocessors / size && kBlocks / slices >= KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS; slices++) {
                plans.add(new StreamKPlan(tile, (int) (units * slices * size), (int) units));
            }
            for (StreamKPlan streamK : new StreamKPlan[] {shared(tile, units, kBlocks, multiprocessors), tail(tile, units, kBlocks, multiprocessors)}) {
                if (streamK != null && !plans.contains(streamK)) {
                    plans.add(streamK);
                }
            }
        }
        plans.sort(Comparator.comparingDouble(p -> ScheduleCost.us(p, m, n, kBlocks, multiprocessors, pairs, kBlockUs)));
        return plans;
    }

    /** The kernel's units of an {@code m} x {@code n} C in this plan: its tiles, or a clustered tile's blocks of tiles. */
    long units(int m, int n) {
        return tile.blocks(m, n);
    }

    /** Clusters of the launch: its CTAs without clusters. */
    int clusters() {
        return grid / tile.clusterSize();
    }

    /** Whether this plan is split-K for a shape of {@code units} units: every unit shared, in as many slices each. */
    boolean isSplitK(long units) {
        return sharedTiles == units && clusters() > units && clusters() % units == 0;
    }

    /**
     * The plan for a shape of {@code units} units ({@link #units}) in words: "whole tiles on 64
     * blocks", "split-K on 128 blocks, 32 tiles in 4 slices of K", "stream-K on ...", followed by ",
     * 128 x 192 tiles" (or 128 x 128, 64 x 128, 64 x 64) where the tile is not 128 x 256, ", in pairs"
     * for 128 x 256 tiles in pairs, ", 64 x 128 tiles in pairs" for the other pairs and ", 64 x 64
     * tiles in blocks of 2 x 2" for the other clusters (of C's tiles, down and across, for a swapped
     * tile: ", 32 x 64 swapped tiles in blocks of 2 x 1"). A clustered plan that shares units counts
     * them as pairs ("16 pairs in 2 slices of K") or blocks ("14 blocks in 4 slices of K").
     */
    String describe(long units) {
        boolean pairs = tile.clusterM() == 2 && tile.clusterN() == 1;
        String size = tile == GemmTile.WIDE ? "" : tile == GemmTile.PAIR ? ", in pairs"
                : ", " + tile.describe() + " tiles" + (pairs ? " in pairs"
                : tile.clustered() ? " in blocks of " + blockShape() : "");
        String unit = !tile.clustered() ? " tiles" : pairs ? " pairs" : " blocks";
        if (sharedTiles == 0) {
            return "whole tiles on " + grid + " blocks" + size;
        }
        if (isSplitK(units)) {
            return "split-K on " + grid + " blocks, " + units + unit + " in " + clusters() / units + " slices of K" + size;
        }
        return "stream-K on " + grid + " blocks, " + sharedTiles + " of " + units + unit + " shared by K" + size;
    }

    /** Tiles of C a cluster's block holds down and across: the product's, transposed, for a swapped tile. */
    private String blockShape() {
        return tile.swapped() ? tile.clusterN() + " x " + tile.clusterM() : tile.clusterM() + " x " + tile.clusterN();
    }

    /**
     * The stream-K plan of {@code units} units ({@link #units}), however full the waves: every unit
     * shared with fewer units than clusters fit on the SMs, else the last full wave and the partial
     * one (a full wave when there is none); null where it would not help (see the class notes) or
     * its iterations overflow the kernel's int arithmetic.
     */
    static StreamKPlan shared(GemmTile tile, long units, int kBlocks, int multiprocessors) {
        int clusters = multiprocessors / tile.clusterSize();
        if (clusters == 0) {
            return null;
        }
        long shared = units < clusters ? units : units % clusters + clusters;
        long iterations = shared * kBlocks;
        int grid = (int) Math.min(clusters, iterations / KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS);
        // Fewer units than clusters: worth it only with more clusters than units; more: only on every SM.
        boolean useful = units < clusters ? grid > units : grid == clusters;
        return iterations > Integer.MAX_VALUE / 2 || !useful ? null : new StreamKPlan(tile, grid * tile.clusterSize(), (int) shared);
    }

    /**
     * Whole tiles first, then the last of them shared out by K over every SM, as many as divide the
     * SMs evenly and at least the last partial wave's: every shared tile takes the same number of
     * CTAs, each starting at the same k, so that the tiles that share a panel read it at the same
     * time, as in split-K, and the whole tiles before them leave at most a few SMs idle. 512 x 9216 x
     * 16384 ran in 209.8 µs with 66 of its 192 tiles of 128 x 192 shared by two CTAs each, 281.1 in
     * whole tiles and 286.2 with the 60 of its partial wave shared in unrelated runs of k-blocks
     * (GemmPlanTimes at commit {@code 848012e}; cuBLASLt 225.2). At most {@value
     * #MAX_TAIL_CTAS_PER_TILE} CTAs a tile: 1024 x 3584 x 8192 ran in 94.9 µs with 22 tiles of 128 x
     * 192 shared by six CTAs each, 90.5 in whole 128 x 256 tiles. Null where the tiles make whole
     * waves or fewer than one, no such count exists, or a CTA would get fewer than {@value
     * KernelAbi#IRIS_GEMM_STREAM_K_MIN_BLOCKS} k-blocks. Of a clustered tile, {@code units} blocks
     * over the clusters that fit on the SMs.
     */
    static StreamKPlan tail(GemmTile tile, long units, int kBlocks, int multiprocessors) {
        int clusters = multiprocessors / tile.clusterSize();
        if (clusters == 0 || units <= clusters || units % clusters == 0) {
            return null;
        }
        for (long perUnit = Math.min(MAX_TAIL_CTAS_PER_TILE, clusters / (units % clusters)); perUnit >= 2; perUnit--) {
            if (clusters % perUnit == 0) {
                long shared = clusters / perUnit;
                boolean fits = kBlocks / perUnit >= KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS && shared * kBlocks <= Integer.MAX_VALUE / 2;
                return fits ? new StreamKPlan(tile, clusters * tile.clusterSize(), (int) shared) : null;
            }
        }
        return null;
    }

    /** Bytes of partials a launch of {@code grid} CTAs needs: two tiles of F32 per CTA. */
    static long partialBytes(int grid) {
        return (long) KernelAbi.IRIS_GEMM_STREAM_K_SLOTS_PER_CTA * grid * Gemm.TILE_M * Gemm.TILE_N * Float.BYTES;
    }

    /**
     * Bytes of counters for up to {@code sharedTiles} shared tiles: one u32 per consumer warpgroup and
     * tile (a clustered plan shares fewer blocks than this of its clusters' tiles).
     */
    static long counterBytes(int sharedTiles) {
        return 2L * sharedTiles * Integer.BYTES;
    }

    /** The most tiles any plan on {@code multiprocessors} SMs shares out: a partial wave and a full one. */
    static int maxSharedTiles(int multiprocessors) {
        return 2 * multiprocessors - 1;
    }
}

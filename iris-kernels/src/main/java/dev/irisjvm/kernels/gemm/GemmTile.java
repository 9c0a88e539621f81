package dev.irisjvm.kernels.gemm;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The output tiles the library's GEMM kernels come in (gemm.cu, iris/gemm/config.cuh), each a kernel
 * of its own per variant: a {@link StreamKPlan} says which one a call runs. Problems of up to 48 rows
 * with A stored M x K take a swapped tile ({@link #swappedFor}; up to 32 rows only where it runs
 * every tile whole in one wave, {@link Gemm#skinnyOverSwapped}); other problems of at most {@link
 * Gemm#SHORT_TILE_M} rows {@link #SHORT} or {@link #SHORT_THIN}; the others {@link #WIDE}
 * or, where its tiles would leave SMs idle or a wave mostly empty, any other unclustered one, as
 * {@link ScheduleCost} estimates. The clustered ones run in clusters of CTAs on a block of {@link
 * #clusterM()} x {@link #clusterN()} adjacent tiles, whose CTAs share A's k-blocks along a row of the
 * block and B's along a column, each loading its share into all that read it; a plan shares such
 * blocks out by K as it would tiles. The swapped ones ({@link #swapped()}) compute C^T = B A^T for
 * few rows of C (iris/gemm/swapped.cuh): their rows, columns, clusters and boxes are the product's
 * (64 of C's columns by 8 to 48 of its rows), and they take A stored M x K only.
 */
enum GemmTile {
    /** 128 x 256, two consumer warpgroups: {@code iris_gemm_*}. */
    WIDE(Gemm.TILE_M, Gemm.TILE_N, Gemm.THREADS, "", 1, 1),
    /** 128 x 192, two consumer warpgroups: {@code iris_gemm_mid_*}, a third more tiles than WIDE. */
    MID(Gemm.TILE_M, Gemm.MID_TILE_N, Gemm.THREADS, "mid_", 1, 1),
    /** 128 x 128, two consumer warpgroups: {@code iris_gemm_narrow_*}, twice the tiles of WIDE. */
    NARROW(Gemm.TILE_M, Gemm.NARROW_TILE_N, Gemm.THREADS, "narrow_", 1, 1),
    /** 64 x 128, one consumer warpgroup: {@code iris_gemm_short_*}, every tile for M at most 64. */
    SHORT(Gemm.SHORT_TILE_M, Gemm.SHORT_TILE_N, Gemm.SHORT_THREADS, "short_", 1, 1),
    /**
     * 64 x 64, twice the tiles of SHORT, two consumer warpgroups on every other k-block each, the
     * second handing its sum to the first: {@code iris_gemm_short_thin_*}.
     */
    SHORT_THIN(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_", 1, 1),
    /**
     * 128 x 256 in clusters of two CTAs on vertically adjacent tiles that share B, each loading half
     * of B's rows into both: {@code iris_gemm_pair_*}, which the rule runs plans of whole tiles in
     * ({@link StreamKPlan#paired}).
     */
    PAIR(Gemm.TILE_M, Gemm.TILE_N, Gemm.THREADS, "pair_", 2, 1),
    /** 128 x 192 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_mid_pair_*}. */
    MID_PAIR(Gemm.TILE_M, Gemm.MID_TILE_N, Gemm.THREADS, "mid_pair_", 2, 1),
    /** 128 x 128 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_narrow_pair_*}. */
    NARROW_PAIR(Gemm.TILE_M, Gemm.NARROW_TILE_N, Gemm.THREADS, "narrow_pair_", 2, 1),
    /** 64 x 128 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_short_pair_*}. */
    SHORT_PAIR(Gemm.SHORT_TILE_M, Gemm.SHORT_TILE_N, Gemm.SHORT_THREADS, "short_pair_", 2, 1),
    /**
     * 64 x 64 in clusters of two CTAs that share B, as {@link #PAIR}, each with two consumers on every
     * other k-block as {@link #SHORT_THIN}: {@code iris_gemm_short_thin_pair_*}. Each CTA loads 32
     * rows of an N x K B, or 32 of the 64 K rows of a K x N B's one box.
     */
    SHORT_THIN_PAIR(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_pair_", 2, 1),
    /**
     * 64 x 64 in clusters of two CTAs side by side in a row that share A, each loading 32 of A's rows
     * (of a K x M A, 32 of its one box's K rows): {@code iris_gemm_short_thin_1x2_*}. A problem of one
     * tile row has half its CTAs past C in {@link #SHORT_THIN_PAIR}, none here.
     */
    SHORT_THIN_1X2(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_1x2_", 1, 2),
    /** 64 x 64 in clusters of four CTAs on a block of 2 x 2 tiles, sharing A by two and B by two: {@code iris_gemm_short_thin_2x2_*}. */
    SHORT_THIN_2X2(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_2x2_", 2, 2),
    /** 64 x 64 in clusters of four CTAs on a column of 4 tiles that share B, 16 rows (K rows) each: {@code iris_gemm_short_thin_4x1_*}. */
    SHORT_THIN_4X1(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_4x1_", 4, 1),
    /** 64 x 64 in clusters of four CTAs on a row of 4 tiles that share A, 16 rows (K rows) each: {@code iris_gemm_short_thin_1x4_*}. */
    SHORT_THIN_1X4(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_1x4_", 1, 4),
    /**
     * Swapped: tiles of 8 rows of C by 64 columns, computed as 64 x 8 tiles of C^T = B A^T (B's rows
     * on wgmma's 64-row side, C's rows on its N), two consumers on every other k-block, each
     * finished tile stored transposed: {@code iris_gemm_swap8_*}. No multiply-add on rows past C
     * where M is at most 8.
     */
    SWAP_8(Gemm.SHORT_TILE_M, 8, Gemm.THREADS, "swap8_", 1, 1),
    /** Swapped, 16 rows of C by 64 columns: {@code iris_gemm_swap16_*}. */
    SWAP_16(Gemm.SHORT_TILE_M, 16, Gemm.THREADS, "swap16_", 1, 1),
    /** Swapped, 32 rows of C by 64 columns: {@code iris_gemm_swap32_*}. */
    SWAP_32(Gemm.SHORT_TILE_M, 32, Gemm.THREADS, "swap32_", 1, 1),
    /** Swapped, 48 rows of C by 64 columns: {@code iris_gemm_swap48_*}. */
    SWAP_48(Gemm.SHORT_TILE_M, 48, Gemm.THREADS, "swap48_", 1, 1),
    /**
     * Swapped, 32 rows of C by 64 columns in clusters of two tiles, one above the other (the
     * product's block of 1 x 2), that share B's k-blocks, each CTA loading 32 of B's rows (of a K x N
     * B, 32 of its box's K rows): {@code iris_gemm_swap32_1x2_*}.
     */
    SWAP_32_PAIR(Gemm.SHORT_TILE_M, 32, Gemm.THREADS, "swap32_1x2_", 1, 2),
    /**
     * Swapped, 16 rows of C by 64 columns in clusters of two tiles, one above the other, that share
     * B as {@link #SWAP_32_PAIR}'s do: {@code iris_gemm_swap16_1x2_*}. What cuBLASLt runs 32-row
     * problems on (32 x 4096 x 1024 in 4.99 µs against 6.29 on 32 x 64 swapped tiles, GemmPlanTimes
     * at commit {@code cf0492f}): one wave of 128 CTAs that load each k-block of B once per pair.
     * GemmPlanTimes times it; neither the rule nor the tuner takes it yet.
     */
    SWAP_16_PAIR(Gemm.SHORT_TILE_M, 16, Gemm.THREADS, "swap16_1x2_", 1, 2);

    private final int rows;
    private final int cols;
    private final int threads;
    private final String namePart;
    private final int clusterM;
    private final int clusterN;

    GemmTile(int rows, int cols, int threads, String namePart, int clusterM, int clusterN) {
        this.rows = rows;
        this.cols = cols;
        this.threads = threads;
        this.namePart = namePart;
        this.clusterM = clusterM;
        this.clusterN = clusterN;
    }

    /** The tile every plan of an {@code m}-row problem starts from: SHORT for at most 64 rows, else WIDE. */
    static GemmTile of(long m) {
        return m <= Gemm.SHORT_TILE_M ? SHORT : WIDE;
    }

    /**
     * The tiles an {@code m}-row problem may run on: the 64-row ones, and past 64 rows the 128-row
     * ones too. Where 128-row tiles would leave SMs idle, 64-row ones make twice the tiles with one
     * consumer warpgroup each: 128 x 8192 x 8192 ran in 37.8 µs on 64 x 128 tiles, 42.1 on 128 x 64
     * and 49.3 on 128 x 128 (GemmPlanTimes at commit {@code 20fe63c}, where a 128 x 64 tile was
     * slower than 64 x 128 on each of 34 shapes, and was dropped).
     */
    static GemmTile[] choices(long m) {
        return m <= Gemm.SHORT_TILE_M ? new GemmTile[] {SHORT, SHORT_THIN} : new GemmTile[] {WIDE, MID, NARROW, SHORT, SHORT_THIN};
    }

    /** The swapped tiles the rule takes, narrowest first (a constant: {@link #swappedFor} runs on every call). */
    private static final GemmTile[] FEW_ROWS = {SWAP_8, SWAP_16, SWAP_32, SWAP_48};

    /**
     * The swapped tile the rule runs a problem of {@code m} rows on where A is stored M x K: up to
     * 48 rows, the narrowest that holds them; else null (the 64-row tiles). GemmPlanTimes at commit {@code d4df5a0}
     * (docs/benchmarks/gemm-plans-2026-12-05-d4df5a0.json): 32 x 4096 x 1024 ran in 6.53 µs on 32 x 64
     * swapped tiles against 7.09 in the skinny kernels, 32 x 4096 x 1792 in 8.45 against 9.11, 32 x
     * 8192 x 4096 in 20.4 against 21.2, 16 x 7168 x 4096 in 18.5 on 16 x 64 tiles against 19.7, and 33
     * x 1000 x 8200 in 13.4 on 48 x 64 tiles (split-K) against 13.9 on 64 x 64. Up to 8 rows, at
     * {@code 0adf001} on an H100 (gemm-plans-2026-12-06-0adf001-h100-*.json): wherever 8 x 64 tiles
     * run whole in one wave, they beat the skinny kernels' split the rule took before (8 x 4096 x
     * 1792: 7.71 against 9.13 µs, 8 x 8192 x 2048: 13.77 against 15.53, 1 x 7168 x 4096: 22.41
     * against 23.93; the least 1 x 6144 x 4096, 20.93 against 21.28), as at {@code d4df5a0} on an H200
     * (7.76 against 8.04, 11.87 against 12.19).
     */
    static GemmTile swappedFor(long m) {
        for (GemmTile tile : FEW_ROWS) {
            if (m <= tile.cols) {
                return tile;
            }
        }
        return null;
    }

    /**
     * Every tile a problem of {@code m} rows can run on to some purpose, the rule's or not: all but
     * the swapped ones past 64 rows (GemmPlanTimes times them all, ScheduleCostFit tries them).
     */
    static GemmTile[] all(long m) {
        return Arrays.stream(values()).filter(t -> !t.swapped() || m <= Gemm.SHORT_TILE_M).toArray(GemmTile[]::new);
    }

    /**
     * Whether this tile's kernels compute C^T = B A^T (iris/gemm/swapped.cuh): then its rows are
     * C's columns, its columns C's rows, its A is B and its B is A, which must be stored M x K. They
     * are the tiles narrower than an epilogue chunk of 64 columns (config.cuh's kEpilogue).
     */
    boolean swapped() {
        return cols < Gemm.THIN_TILE_N;
    }

    /** Whether this tile's kernels run in clusters of CTAs that share operands. */
    boolean clustered() {
        return clusterSize() > 1;
    }

    /** Tile rows of a cluster's block: CTAs that share B. */
    int clusterM() {
        return clusterM;
    }

    /** Tile columns of a cluster's block: CTAs that share A. */
    int clusterN() {
        return clusterN;
    }

    /** CTAs per cluster. */
    int clusterSize() {
        return clusterM * clusterN;
    }

    /** Each unclustered tile's clustered ones, in declaration order, worked out once (the rule asks while planning). */
    private static final Map<GemmTile, List<GemmTile>> CLUSTERS = new EnumMap<>(GemmTile.class);

    static {
        for (GemmTile tile : values()) {
            CLUSTERS.put(tile, tile.clustered() ? List.of() : Arrays.stream(values())
                    .filter(t -> t.clustered() && t.rows == tile.rows && t.cols == tile.cols && t.threads == tile.threads
                            && t.swapped() == tile.swapped()).toList());
        }
    }

    /** This tile in clusters of two on vertically adjacent tiles that share B, or null where it has none (the clustered ones). */
    GemmTile inPairs() {
        return CLUSTERS.get(this).stream().filter(t -> t.clusterM == 2 && t.clusterN == 1).findFirst().orElse(null);
    }

    /** This tile in every cluster it has kernels for (none for the clustered ones). */
    List<GemmTile> inClusters() {
        return CLUSTERS.get(this);
    }

    int rows() {
        return rows;
    }

    int cols() {
        return cols;
    }

    /** Threads per block of this tile's kernels. */
    int threads() {
        return threads;
    }

    /** Output tiles of an {@code m} x {@code n} C (of its n x m transpose for a swapped tile). */
    long tiles(long m, long n) {
        return swapped() ? GemmChecks.ceilDiv(n, rows) * GemmChecks.ceilDiv(m, cols) : GemmChecks.ceilDiv(m, rows) * GemmChecks.ceilDiv(n, cols);
    }

    /** Clusters' blocks of tiles of an {@code m} x {@code n} C: its tiles for an unclustered tile. */
    long blocks(long m, long n) {
        long productRows = swapped() ? n : m;
        long productCols = swapped() ? m : n;
        return GemmChecks.ceilDiv(GemmChecks.ceilDiv(productRows, rows), clusterM)
                * GemmChecks.ceilDiv(GemmChecks.ceilDiv(productCols, cols), clusterN);
    }

    /**
     * What follows {@code iris_gemm_} in this tile's kernel names: "", "mid_", "narrow_", "short_",
     * "short_thin_", for the pairs "pair_", "mid_pair_", "narrow_pair_", "short_pair_" or
     * "short_thin_pair_", for 64 x 64 in other clusters "short_thin_1x2_", "short_thin_2x2_",
     * "short_thin_4x1_" or "short_thin_1x4_", and for the swapped ones "swap8_" ... "swap48_",
     * "swap32_1x2_" and "swap16_1x2_".
     */
    String namePart() {
        return namePart;
    }

    /** "128 x 256"; of C, not the product: "32 x 64 swapped". */
    String describe() {
        return swapped() ? cols + " x " + rows + " swapped" : rows + " x " + cols;
    }

    /**
     * Rows of an N x K B's TMA box: the tile's columns, one CTA's share where a column of the block
     * shares B (for a swapped tile, of A's box: the product's B).
     */
    int bBoxRows() {
        return cols / clusterM;
    }

    /**
     * Rows of an M x K A's TMA box: the tile's rows, one CTA's share where a row of the block shares A
     * (for a swapped tile, of B's box: the product's A).
     */
    int aBoxRows() {
        return rows / clusterN;
    }
}

package dev.irisjvm.kernels.gemm;

import java.util.Arrays;

/**
 * The output tiles the library's GEMM kernels come in (gemm.cu, iris/gemm/config.cuh), each a kernel
 * of its own per variant: a {@link StreamKPlan} says which one a call runs. Problems of at most
 * {@link Gemm#SHORT_TILE_M} rows take {@link #SHORT} or {@link #SHORT_THIN}; the others {@link #WIDE}
 * or, where its tiles would leave SMs idle or a wave mostly empty, any other unpaired one, as
 * {@link ScheduleCost} estimates.
 */
enum GemmTile {
    /** 128 x 256, two consumer warpgroups: {@code iris_gemm_*}. */
    WIDE(Gemm.TILE_M, Gemm.TILE_N, Gemm.THREADS, "", Pairing.NONE),
    /** 128 x 192, two consumer warpgroups: {@code iris_gemm_mid_*}, a third more tiles than WIDE. */
    MID(Gemm.TILE_M, Gemm.MID_TILE_N, Gemm.THREADS, "mid_", Pairing.NONE),
    /** 128 x 128, two consumer warpgroups: {@code iris_gemm_narrow_*}, twice the tiles of WIDE. */
    NARROW(Gemm.TILE_M, Gemm.NARROW_TILE_N, Gemm.THREADS, "narrow_", Pairing.NONE),
    /** 64 x 128, one consumer warpgroup: {@code iris_gemm_short_*}, every tile for M at most 64. */
    SHORT(Gemm.SHORT_TILE_M, Gemm.SHORT_TILE_N, Gemm.SHORT_THREADS, "short_", Pairing.NONE),
    /**
     * 64 x 64, twice the tiles of SHORT, two consumer warpgroups on every other k-block each, the
     * second handing its sum to the first: {@code iris_gemm_short_thin_*}.
     */
    SHORT_THIN(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_", Pairing.NONE),
    /**
     * 128 x 256 in clusters of two CTAs on vertically adjacent tiles that share B, each loading half
     * of B's rows into both: {@code iris_gemm_pair_*}, for plans of whole tiles ({@link
     * StreamKPlan#paired}).
     */
    PAIR(Gemm.TILE_M, Gemm.TILE_N, Gemm.THREADS, "pair_", Pairing.SHARE_B),
    /** 128 x 192 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_mid_pair_*}. */
    MID_PAIR(Gemm.TILE_M, Gemm.MID_TILE_N, Gemm.THREADS, "mid_pair_", Pairing.SHARE_B),
    /** 128 x 128 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_narrow_pair_*}. */
    NARROW_PAIR(Gemm.TILE_M, Gemm.NARROW_TILE_N, Gemm.THREADS, "narrow_pair_", Pairing.SHARE_B),
    /** 64 x 128 in clusters of two CTAs that share B, as {@link #PAIR}: {@code iris_gemm_short_pair_*}. */
    SHORT_PAIR(Gemm.SHORT_TILE_M, Gemm.SHORT_TILE_N, Gemm.SHORT_THREADS, "short_pair_", Pairing.SHARE_B),
    /**
     * 64 x 64 in clusters of two CTAs that share B, as {@link #PAIR}, each with two consumers on
     * every other k-block as {@link #SHORT_THIN}: {@code iris_gemm_short_thin_pair_*}. Each CTA loads
     * 32 rows of an N x K B, or 32 of the 64 K rows of a K x N B's one box.
     */
    SHORT_THIN_PAIR(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_pair_", Pairing.SHARE_B),
    /**
     * 64 x 64 in clusters of two CTAs on tiles side by side in a row that share A, each loading 32 of
     * A's rows (of a K x M A, 32 of its one box's 64 K rows) into both: {@code
     * iris_gemm_short_thin_row_pair_*}. A problem of one tile row has half its CTAs past C in {@link
     * #SHORT_THIN_PAIR}, none here.
     */
    SHORT_THIN_ROW_PAIR(Gemm.SHORT_TILE_M, Gemm.THIN_TILE_N, Gemm.THREADS, "short_thin_row_pair_", Pairing.SHARE_A);

    /** Which operand a tile's clusters of two CTAs share, if its kernels run in clusters. */
    enum Pairing {
        NONE,
        /** Vertically adjacent tiles, which read the same columns of B. */
        SHARE_B,
        /** Tiles side by side in a row, which read the same rows of A. */
        SHARE_A
    }

    private final int rows;
    private final int cols;
    private final int threads;
    private final String namePart;
    private final Pairing pairing;

    GemmTile(int rows, int cols, int threads, String namePart, Pairing pairing) {
        this.rows = rows;
        this.cols = cols;
        this.threads = threads;
        this.namePart = namePart;
        this.pairing = pairing;
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

    /** Every tile but the pairs, which only whole-tile plans take ({@link StreamKPlan#inPairs}, {@link StreamKPlan#inRowPairs}). */
    static GemmTile[] unpaired() {
        return Arrays.stream(values()).filter(t -> !t.paired()).toArray(GemmTile[]::new);
    }

    /** Whether this tile's kernels run in clusters of two CTAs that share an operand. */
    boolean paired() {
        return pairing != Pairing.NONE;
    }

    /** Which operand this tile's clusters share, if any. */
    Pairing pairing() {
        return pairing;
    }

    /** This tile side by side in clusters of two that share A, or null where it has no such kernels (all but 64 x 64). */
    GemmTile inRowPairs() {
        return this == SHORT_THIN ? SHORT_THIN_ROW_PAIR : null;
    }

    /** This tile in vertically adjacent clusters of two that share B, or null for the pairs themselves. */
    GemmTile inPairs() {
        return switch (this) {
            case WIDE -> PAIR;
            case MID -> MID_PAIR;
            case NARROW -> NARROW_PAIR;
            case SHORT -> SHORT_PAIR;
            case SHORT_THIN -> SHORT_THIN_PAIR;
            default -> null;
        };
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

    /** Output tiles of an {@code m} x {@code n} C. */
    long tiles(long m, long n) {
        return GemmChecks.ceilDiv(m, rows) * GemmChecks.ceilDiv(n, cols);
    }

    /**
     * What follows {@code iris_gemm_} in this tile's kernel names: "", "mid_", "narrow_", "short_",
     * "short_thin_", and for the pairs "pair_", "mid_pair_", "narrow_pair_", "short_pair_",
     * "short_thin_pair_" or "short_thin_row_pair_".
     */
    String namePart() {
        return namePart;
    }

    /** "128 x 256". */
    String describe() {
        return rows + " x " + cols;
    }

    /** Rows of an N x K B's TMA box: the tile's columns, half of them for a CTA of a pair that shares B. */
    int bBoxRows() {
        return pairing == Pairing.SHARE_B ? cols / 2 : cols;
    }

    /** Rows of an M x K A's TMA box: the tile's rows, half of them for a CTA of a pair that shares A. */
    int aBoxRows() {
        return pairing == Pairing.SHARE_A ? rows / 2 : rows;
    }
}

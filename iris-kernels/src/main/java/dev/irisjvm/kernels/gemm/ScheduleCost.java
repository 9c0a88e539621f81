package dev.irisjvm.kernels.gemm;

import java.util.function.ToDoubleFunction;

/**
 * The estimated time of a GEMM launch under a {@link StreamKPlan}, in µs on an H200, from which
 * {@link StreamKPlan#choose} picks the schedule of a shape. A model, not a measurement: each term is
 * one thing that limits the kernel, and its constants were fitted (least squares on the logarithm
 * of the time) to the 199 timings of whole tiles and of stream-K in the model-shape suite
 * (docs/benchmarks/gemm-suite-findings.md), where it is within 15 % RMS.
 *
 * <ul>
 *   <li>Compute: a CTA's k-blocks in a row, each a 128 x 256 x 64 wgmma step, whatever rows of the
 *       tile exist. A k-block of a 64 x 128 short tile takes about a third as long, not the quarter
 *       its multiply-adds would say, and one of 64 x 64 a quarter: streaming the operands is the
 *       limit; one of a 128 x 128 tile costs more than half of 128 x 256's: per multiply-add it
 *       moves a third more operand bytes through shared memory.
 *   <li>Memory: bytes of A and B over the GPU's bandwidth. Tiles that run side by side in step (whole
 *       waves, split-K, whose slices of neighbouring tiles start at the same k, and a tail of tiles
 *       that take the same number of CTAs each) read a panel once for all the tiles that share it;
 *       stream-K's CTAs otherwise start at unrelated k, so each tile
 *       reads its own panels. That is why stream-K halves the speed of a 1024 x 3584 x 8192 GEMM
 *       whose 112 tiles already nearly fill the GPU.
 *   <li>The fix-up: each piece of a shared tile writes its partial and the last reads them all, after
 *       their k-blocks, and each piece after the first waits for the one before it to count itself.
 *       The partials' bytes add to the time (until commit {@code 945e9f3} they were priced as
 *       overlapping the mainloop: in the model suite's run at that commit, shared plans measured
 *       10 % over the estimate on the geometric mean, 5.7 % with them added, whole tiles 8.8 % either
 *       way; it moved 4 shapes' choices, each to the plan that had measured faster).
 *   <li>A fixed cost per launch and per wave (pipeline fill, epilogue), less for plans that share no
 *       tile.
 * </ul>
 */
final class ScheduleCost {
    /** µs of one k-block of a 128 x 256 tile on one SM. */
    static final double K_BLOCK_US = 0.624;
    /**
     * µs of one k-block of a 64 x 128 short tile on one SM, and {@link #SHORT_THIN_K_BLOCK_US} of a
     * 64 x 64 one (two consumers on every other k-block): values on a grid of 0.01 µs whose choices
     * take the fastest measured plan on each of the 34 shapes of more than 32 rows and under 80 µs in
     * the model suite, every schedule of which in every tile GemmPlanTimes timed at commit {@code
     * fb12c06} (the rule before these tiles: 0.946 of the fastest as a geometric mean;
     * docs/benchmarks/gemm-suite-findings.md). The short tile's was 0.28, fitted on the suite's
     * short-tile timings at commit {@code 1e8a765} when only problems of at most 64 rows took it.
     */
    static final double SHORT_K_BLOCK_US = 0.20;
    static final double SHORT_THIN_K_BLOCK_US = 0.15;
    /**
     * µs of one k-block of 64 x 128 tiles in pairs ({@link GemmTile#SHORT_PAIR}), a candidate only up
     * to {@link #SHORT_PAIR_MAX_K_BLOCKS}. GemmPlanTimes at commit {@code 73707d3} timed them beside
     * the unpaired tiles on 14 shapes of more than 64 rows: faster on the three of K about 1024
     * (1000 x 1000 x 1000 9.2 µs against 11.9 alone, 127 x 4104 x 1032 8.1 against 8.9 alone and
     * 10.4 on 64 x 64 tiles, 128 x 8192 x 1024 8.1 against 8.5), slower on every one of K 2048 or
     * more (128 x 8192 x 8192 41.1 against 37.8). The value is one that makes each of those three
     * choose the pairs.
     */
    static final double SHORT_PAIR_K_BLOCK_US = 0.12;
    /** The most k-blocks of a problem whose 64 x 128 tiles may run in pairs: the longest K measured faster in pairs (1032). */
    static final int SHORT_PAIR_MAX_K_BLOCKS = 17;
    /**
     * µs of one k-block of a 128 x 128 narrow tile on one SM: of 0.30 to 0.37 µs, the value whose
     * choices give the best geometric mean of the measured ratios to cuBLAS over the 69 shapes of
     * more than 64 rows in the suite runs at commits {@code a7f781b} (half of {@link #K_BLOCK_US})
     * and {@code d0a3595} (0.37, the least-squares fit on the narrow timings alone), each choice
     * priced by the time measured for that plan in either run: 0.863, against 0.860 at half and
     * 0.852 at 0.37. The least-squares value moved shapes that gain from narrow tiles (256 x 8192 x
     * 4096: 0.90 x on narrow tiles, 0.71 x on wide ones in two slices of K) back to split-K, whose
     * fix-up the model under-prices.
     */
    static final double NARROW_K_BLOCK_US = 0.33;
    /**
     * µs of one k-block of a 128 x 192 mid tile on one SM: three quarters of {@link #K_BLOCK_US} and
     * a little more, as the narrow tile's is half and a little more (per multiply-add it moves a
     * twelfth more operand bytes through shared memory than 128 x 256). Measured in the model suite
     * at commit {@code 945e9f3}: 0.46 to 0.49 µs on the shapes the rule put on it with K up to 8192.
     */
    static final double MID_K_BLOCK_US = 0.48;
    /**
     * The share of its time that a plan of whole 128-row tiles takes in pairs ({@link
     * StreamKPlan#paired}), which the rule runs it in where K is off 64 ({@link
     * StreamKPlan#pairsPay}; it pairs no plan that shares tiles), and only there priced so. Measured in
     * GemmPlanTimes at commits {@code 404d74a} and {@code 848012e}: 0.96 for 128 x 256 tiles on 8192
     * x 8192 x 8192, 0.97 for 128 x 192 on 1536 x 1536 x 1536, 0.90 to 0.95 for 128 x 128 (0.81 where
     * B's rows are off 128 bytes). Without it the model shares the last wave of the largest shapes,
     * a small part of many, by K rather than run them whole in pairs. With it, on the 47 shapes of
     * more than 32 rows whose chosen plan GemmPlanTimes timed at commits {@code fb12c06} to {@code
     * 15fcaf4} (each on its latest run), the rule's plan is the fastest timed or within 3 % of it on
     * each but 512 x 14336 x 8192 (188.0 µs whole in pairs, 175.6 with a tail shared by K), 0.998 of
     * it as a geometric mean (RuleAgainstPlanTimesTest holds the rule to this).
     */
    static final double PAIRED = 0.95;
    /** Bytes per µs the GPU's memory delivers to the kernel. */
    static final double BYTES_PER_US = 4.91e6;
    /** µs per launch. */
    static final double LAUNCH_US = 1.69;
    /**
     * µs per wave of tiles in a plan that shares tiles. 6.02 in the fit of the H200 timings; 6.8 sends
     * two shapes that 6.02 split by K to whole tiles that GemmPlanTimes measured faster on an H100
     * ({@code 0adf001}, {@code 3f6baa0}): 64 x 3072 x 4096 to 64 x 64 tiles (13.15 µs against split-K's
     * 16.41) and 1024 x 2304 x 16384 to 128 x 192 (118.3 against stream-K's 129.2), and 1024 x 10240 x
     * 8192 from stream-K to whole 128 x 128 tiles, as fast on that H100 (230.1 against 229.6; an H200
     * at {@code 15fcaf4}, before whole units, had them 9 % apart). On the H100 timings 14 of 16 shapes
     * within 3 % of the fastest plan, geometric mean 0.970 → 0.988; on the H200 ones 54 of 63 either
     * way, 0.991 → 0.990. From 7.2 on, 32 x 4096 x 7168 leaves the skinny kernels for 32 x 64 swapped
     * tiles, 8 % faster on the H100 and 7 % slower on the H200 ({@code cf0492f}, SkinnyOrSwappedTest).
     */
    static final double WAVE_US = 6.8;
    /**
     * µs per wave of a plan that shares no tile, which runs the scheduler without K ranges ({@code
     * WholeUnits} in iris/gemm/stream_k.cuh; commit {@code 97e72fd}): less than {@link #WAVE_US}, as
     * GemmPlanTimes measured those plans 2.6 % faster than before it, and at {@code b5d43b2} 0.79 to
     * 0.92 of this model's estimate by tile (geometric means) where split-K's were 0.85 to 1.02. Of
     * 3.0 to 6.0 µs, the values from 3.7 to 4.4 give the best choices on the timings
     * RuleAgainstPlanTimesTest judges: 5 shapes more than 3 % off the fastest timed, 0.994 of it as
     * a geometric mean, where {@link #WAVE_US} gave 7 and 0.990 (with {@link #PAIRED} priced only
     * where the rule pairs, as it now is). The two change 5 of the model suite's shapes' plans: 64 x
     * 3584 x 4096 and 256 x 1792 x 4096 from split-K to whole 64 x 64 tiles, 10 % faster (13.64 µs
     * against 15.16, 13.45 against 14.86, GemmPlanTimes at {@code b5d43b2}); 1024 x 14336 x 4096
     * and 8192 x 1792 x 4096 from stream-K to whole 128 x 192 tiles, and 1024 x 2304 x 16384 from
     * whole 128 x 192 tiles to stream-K, 1.5 % and 2.9 % slower (168.3 against 165.8 µs, 123.7
     * against 120.3).
     */
    static final double WHOLE_WAVE_US = 4.0;
    /** µs each piece of a shared tile adds to its fix-up. */
    static final double PIECE_US = 1.2;

    private ScheduleCost() {
    }

    /**
     * The estimated µs of an {@code m} x {@code n} GEMM of {@code kBlocks} k-blocks under {@code plan}
     * on {@code multiprocessors} SMs, its whole 128-row tiles in pairs where {@code pairs} ({@link
     * StreamKPlan#pairsPay}).
     */
    static double us(StreamKPlan plan, int m, int n, int kBlocks, int multiprocessors, boolean pairs) {
        return us(plan, m, n, kBlocks, multiprocessors, pairs, ScheduleCost::kBlockUs);
    }

    /** µs of one k-block of {@code tile} on one SM: the constants above. */
    static double kBlockUs(GemmTile tile) {
        return switch (tile) {
            case WIDE, PAIR -> K_BLOCK_US;  // pairs of 128-row tiles are never among the candidates; priced as the tile they pair
            case MID, MID_PAIR -> MID_K_BLOCK_US;
            case NARROW, NARROW_PAIR -> NARROW_K_BLOCK_US;
            case SHORT -> SHORT_K_BLOCK_US;
            case SHORT_PAIR -> SHORT_PAIR_K_BLOCK_US;
            // 64 x 64 clusters are not among the candidates (GemmPlanTimes times them); priced as the tile.
            case SHORT_THIN, SHORT_THIN_PAIR, SHORT_THIN_1X2, SHORT_THIN_2X2, SHORT_THIN_4X1, SHORT_THIN_1X4 -> SHORT_THIN_K_BLOCK_US;
            // Nor are the swapped tiles, which stream B's rows as a 64 x 64 tile streams them.
            case SWAP_8, SWAP_16, SWAP_32, SWAP_48, SWAP_32_PAIR, SWAP_16_PAIR -> SHORT_THIN_K_BLOCK_US;
        };
    }

    /**
     * {@link #us(StreamKPlan, int, int, int, int, boolean)} with other k-block costs ({@code kBlockUs}
     * of each tile): how ScheduleCostFit tries values against timings.
     */
    static double us(StreamKPlan plan, int m, int n, int kBlocks, int multiprocessors, boolean pairs, ToDoubleFunction<GemmTile> kBlockUs) {
        // A clustered plan is priced as its clusters on blocks of tiles: a cluster's CTAs run their
        // k-blocks side by side, as one CTA runs a tile's. A swapped one as its product, C^T.
        GemmTile tile = plan.tile();
        if (tile.swapped()) {
            int c = m;
            m = n;
            n = c;
        }
        int unitM = tile.rows() * tile.clusterM();
        int unitN = tile.cols() * tile.clusterN();
        long unitsM = GemmChecks.ceilDiv(m, unitM);
        long unitsN = GemmChecks.ceilDiv(n, unitN);
        long units = unitsM * unitsN;
        int clusters = Math.max(1, multiprocessors / tile.clusterSize());
        double k = (double) kBlocks * Gemm.TILE_K;
        double kBlock = kBlockUs.applyAsDouble(tile);
        double operandBytes = ((double) m + n) * k * 2;
        if (plan.sharedTiles() == 0) {
            long waves = GemmChecks.ceilDiv(units, clusters);
            double share = pairs && !StreamKPlan.paired(plan, m, n, multiprocessors).equals(plan) ? PAIRED : 1;
            return share * Math.max(waves * kBlocks * kBlock, operandBytes / BYTES_PER_US) + LAUNCH_US + WHOLE_WAVE_US * waves;
        }
        long shared = plan.sharedTiles();
        long wholeWaves = GemmChecks.ceilDiv(units - shared, clusters);
        double partialBytes = (double) Math.min(m, unitM) * unitN * Float.BYTES;
        long pieces = GemmChecks.ceilDiv(plan.clusters(), shared);
        boolean splitK = plan.isSplitK(units);
        // Split-K's slices, and a tail whose units take the same number of clusters each
        // (StreamKPlan.tail), start at the same k: neighbouring units read a panel once.
        boolean inStep = plan.clusters() % shared == 0;
        double bytes = inStep ? operandBytes * shared / units : ((double) unitsN * m + (double) unitsM * n) * k * 2 * shared / units;
        // The partials are written after a piece's k-blocks and read by the last piece after its own:
        // their traffic follows the mainloop instead of overlapping it.
        double fixUpBytes = (splitK ? plan.clusters() : plan.clusters() + shared) * partialBytes * 2;
        double sharedUs = Math.max(GemmChecks.ceilDiv(shared * kBlocks, plan.clusters()) * kBlock, bytes / BYTES_PER_US)
                + fixUpBytes / BYTES_PER_US;
        return wholeWaves * kBlocks * kBlock + sharedUs + Math.max(1, pieces - 1) * PIECE_US
                + LAUNCH_US + WAVE_US * (1 + wholeWaves);
    }
}

package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class StreamKPlanTest {
    private static final int SMS = 132;

    private static StreamKPlan choose(int m, int n, int k) {
        return StreamKPlan.choose(m, n, Gemm.kBlocks(k), SMS, StreamKPlan.pairsPay(k));
    }

    @Test
    void tilesThatFillTheirWavesRunWhole() {
        assertEquals(StreamKPlan.whole(GemmTile.WIDE, 64 * 32, SMS), choose(8192, 8192, 8192), "15.5 waves, 97 % full");
        assertEquals(StreamKPlan.whole(GemmTile.PAIR, 4000, 5000, SMS), choose(4000, 5000, 3000), "4.85 waves, 97 % full; K off 64: in pairs");
    }

    @Test
    void streamKIsNotTakenWhereTilesThatShareOperandsNearlyFillTheGpu() {
        // Measured on an H200 (gemm-suite, 2026-12-02): stream-K's CTAs read their panels at unrelated
        // k, so these ran at half the speed of whole tiles (166 against 84 µs, 285 against 167 µs).
        assertEquals(StreamKPlan.whole(GemmTile.WIDE, 112, SMS), choose(1024, 3584, 8192), "112 tiles");
        assertEquals(StreamKPlan.whole(GemmTile.WIDE, 224, SMS), choose(512, 14336, 8192), "224 tiles, 1.7 waves");
    }

    @Test
    void fewTilesWithLongKAreSharedOverMostSms() {
        StreamKPlan decode = choose(1, 4096, 14336);
        assertEquals(32, decode.sharedTiles(), "1 x 4096 x 14336: every one of its 32 short tiles shared");
        assertTrue(decode.grid() >= 2 * 32, () -> "1 x 4096 x 14336 on " + decode.grid() + " CTAs");
        StreamKPlan rowParallel = choose(256, 4096, 14336);
        assertTrue(rowParallel.isSplitK(rowParallel.units(256, 4096)) && rowParallel.grid() == 128,
                () -> "256 x 4096 x 14336: split-K on 128 CTAs (32 wide tiles in 4 slices or 64 narrow in 2), not " + rowParallel);
    }

    @Test
    void shortTilesHaveTheirOwnKBlockCostAndTwiceTheTiles() {
        assertEquals(32, GemmChecks.tiles(64, 4096), "64 x 4096: 32 tiles of 64 x 128");
        assertEquals(16, GemmChecks.tiles(65, 4096), "65 x 4096: 16 tiles of 128 x 256");
        double short64 = ScheduleCost.us(StreamKPlan.whole(GemmTile.SHORT, 32, SMS), 64, 4096, 64, SMS, true);
        double tall65 = ScheduleCost.us(StreamKPlan.whole(GemmTile.WIDE, 16, SMS), 65, 4096, 64, SMS, true);
        assertEquals(64 * ScheduleCost.SHORT_K_BLOCK_US, short64 - ScheduleCost.LAUNCH_US - ScheduleCost.WHOLE_WAVE_US, 1e-9);
        assertEquals(64 * ScheduleCost.K_BLOCK_US * ScheduleCost.PAIRED, tall65 - ScheduleCost.LAUNCH_US - ScheduleCost.WHOLE_WAVE_US, 1e-9,
                "two tile rows: whole and in pairs");
        assertEquals(64 * ScheduleCost.K_BLOCK_US, ScheduleCost.us(StreamKPlan.whole(GemmTile.WIDE, 16, SMS), 65, 4096, 64, SMS, false)
                - ScheduleCost.LAUNCH_US - ScheduleCost.WHOLE_WAVE_US, 1e-9, "where pairs do not pay, priced alone");
    }

    @Test
    void aTailOfTilesIsSharedInStepByAnEvenNumberOfCtasEach() {
        // 192 tiles of 128 x 192: 60 past the first wave; 66 take two CTAs each, 126 run whole.
        assertEquals(new StreamKPlan(GemmTile.MID, SMS, 66), StreamKPlan.tail(GemmTile.MID, 192, 256, SMS));
        assertEquals(new StreamKPlan(GemmTile.MID, SMS, 66), choose(512, 9216, 16384), "measured 209.8 µs against 281.1 whole");
        // 160 wide tiles: 28 past the first wave; 4 CTAs divide 132 (33 tiles), 132 / 28 = 4.
        assertEquals(new StreamKPlan(GemmTile.WIDE, SMS, 33), StreamKPlan.tail(GemmTile.WIDE, 160, 128, SMS));
        assertEquals(new StreamKPlan(GemmTile.NARROW, SMS, 33), StreamKPlan.tail(GemmTile.NARROW, 144, 256, SMS),
                "12 past the first wave: 11 CTAs would divide 132, at most 4 take a tile");
        assertNull(StreamKPlan.tail(GemmTile.WIDE, 264, 128, SMS), "whole waves");
        assertNull(StreamKPlan.tail(GemmTile.WIDE, 100, 128, SMS), "less than a wave");
        assertNull(StreamKPlan.tail(GemmTile.WIDE, 8192 + 100, 128, SMS), "100 past the waves: no count of two CTAs or more");
        assertNull(StreamKPlan.tail(GemmTile.WIDE, 140, 4, SMS), "8 tiles of 4 k-blocks over 132 CTAs");
        StreamKPlan tail = StreamKPlan.tail(GemmTile.MID, 192, 256, SMS);
        assertTrue(ScheduleCost.us(tail, 512, 9216, 256, SMS, false) < ScheduleCost.us(new StreamKPlan(GemmTile.MID, SMS, 0), 512, 9216, 256, SMS, false));
    }

    @Test
    void splitKSlicesAreWholeMultiplesOfTheTilesWithTheLeastBlocksEach() {
        for (StreamKPlan p : StreamKPlan.candidates(256, 4096, Gemm.kBlocks(1024), SMS, false)) {
            if (p.isSplitK(32)) {
                assertTrue(Gemm.kBlocks(1024) / (p.grid() / 32) >= KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS, p::toString);
            }
        }
        assertEquals(List.of(StreamKPlan.whole(GemmTile.SHORT_PAIR, 128, 512, SMS), StreamKPlan.whole(GemmTile.SHORT_THIN, 16, SMS),
                StreamKPlan.whole(GemmTile.SHORT, 8, SMS),
                StreamKPlan.whole(GemmTile.NARROW, 4, SMS), StreamKPlan.whole(GemmTile.MID, 3, SMS),
                StreamKPlan.whole(GemmTile.WIDE, 2, SMS)), StreamKPlan.candidates(128, 512, 2, SMS, true),
                "8 short in pairs, 16 short thin, 8 short, 4 narrow, 3 mid or 2 wide tiles of 2 k-blocks: nothing to share");
    }

    @Test
    void splitKPaysForItsPartialsAfterItsKBlocks() {
        // Measured on one H200 at 945e9f3: 28.8 µs whole against 32.9 in two slices; 13.6 against 15.5.
        assertEquals(StreamKPlan.whole(GemmTile.NARROW, 96, SMS), choose(256, 6144, 4096));
        // GemmPlanTimes at 73707d3: 8.1 µs on 64 x 128 tiles in pairs, 10.4 on 64 x 64, 10.9 on 128 x 128; split, 11.6 or more.
        assertEquals(StreamKPlan.whole(GemmTile.SHORT_PAIR, 127, 4104, SMS), choose(127, 4104, 1032));
        assertEquals(new StreamKPlan(GemmTile.SHORT_PAIR, 66, 0), choose(127, 4104, 1032), "33 pairs of 64 x 128 tiles");
        StreamKPlan split = new StreamKPlan(GemmTile.MID, 128, 64);
        double partials = 128.0 * 128 * Gemm.MID_TILE_N * Float.BYTES * 2 / ScheduleCost.BYTES_PER_US;
        assertTrue(ScheduleCost.us(split, 256, 6144, 64, SMS, false) >= 32 * ScheduleCost.MID_K_BLOCK_US + partials, "the partials follow the k-blocks");
    }

    @Test
    void candidatesComeFastestFirstAndTheFirstIsTheChoice() {
        int[][] shapes = {{1, 768, 4096}, {64, 1280, 8192}, {1536, 1536, 1536}, {4096, 2304, 1024}, {8192, 1792, 4096}, {33, 1000, 8200}};
        for (int[] s : shapes) {
            boolean pairs = StreamKPlan.pairsPay(s[2]);
            List<StreamKPlan> c = StreamKPlan.candidates(s[0], s[1], Gemm.kBlocks(s[2]), SMS, pairs);
            assertEquals(pairs ? StreamKPlan.paired(c.get(0), s[0], s[1], SMS) : c.get(0), choose(s[0], s[1], s[2]));
            for (int i = 1; i < c.size(); i++) {
                assertTrue(ScheduleCost.us(c.get(i - 1), s[0], s[1], Gemm.kBlocks(s[2]), SMS, pairs)
                        <= ScheduleCost.us(c.get(i), s[0], s[1], Gemm.kBlocks(s[2]), SMS, pairs));
            }
            assertTrue(c.contains(StreamKPlan.whole(s[0], s[1], SMS)), "whole tiles are always a candidate");
        }
    }

    @Test
    void everyPlanFitsTheGridTheCountersAndTheLeastBlocks() {
        for (int tilesM = 0; tilesM <= 40; tilesM += 3) {
            for (int tilesN = 1; tilesN <= 60; tilesN += 4) {
                for (int kBlocks : new int[] {1, 3, 4, 16, 200}) {
                    int m = tilesM == 0 ? Gemm.SHORT_TILE_M : tilesM * Gemm.TILE_M;   // 0: one row of short tiles
                    long tiles = GemmChecks.tiles(m, tilesN * Gemm.TILE_N);
                    for (StreamKPlan plan : StreamKPlan.candidates(GemmTile.values(), m, tilesN * Gemm.TILE_N, kBlocks, SMS, true)) {
                        String what = tiles + " tiles of " + kBlocks + " k-blocks: " + plan;
                        int size = plan.tile().clusterSize();
                        assertTrue((long) plan.sharedTiles() * size <= StreamKPlan.maxSharedTiles(SMS), what + " needs more counters");
                        assertTrue(plan.grid() >= size && plan.grid() <= SMS && plan.grid() % size == 0, what);
                        assertTrue(plan.sharedTiles() == 0 || (long) plan.sharedTiles() * kBlocks >= (long) plan.clusters() * KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS,
                                what + " gives a cluster fewer than the least k-blocks");
                    }
                }
            }
        }
    }

    @Test
    void wholeWideTilesRunInPairsOnAnEvenGridOfAtMostOneCtaPerSm() {
        assertEquals(new StreamKPlan(GemmTile.PAIR, 132, 0), StreamKPlan.paired(choose(4096, 5120, 3072), 4096, 5120, SMS), "320 pairs");
        // 17 tile rows make 9 pairs of rows: the last pair's second tile lies past C.
        assertEquals(new StreamKPlan(GemmTile.PAIR, 132, 0), StreamKPlan.paired(choose(2049, 3000, 2000), 2049, 3000, SMS));
        assertEquals(new StreamKPlan(GemmTile.PAIR, 72, 0),
                StreamKPlan.paired(StreamKPlan.whole(GemmTile.WIDE, 72, SMS), 1024, 2304, SMS), "4 x 9 pairs");
        assertEquals(new StreamKPlan(GemmTile.PAIR, 2, 0), StreamKPlan.paired(StreamKPlan.whole(GemmTile.WIDE, 1, SMS), 100, 256, SMS),
                "one tile: its pair is past C");
        assertEquals(new StreamKPlan(GemmTile.PAIR, 130, 0), StreamKPlan.paired(StreamKPlan.whole(GemmTile.WIDE, 2048, 131), 8192, 8192, 131),
                "an odd SM count leaves one SM out");
    }

    @Test
    void onlyWholeTilesOf128RowsArePaired() {
        StreamKPlan splitK = new StreamKPlan(GemmTile.WIDE, 128, 32);
        StreamKPlan streamK = new StreamKPlan(GemmTile.NARROW, 132, 156);
        StreamKPlan shortTiles = new StreamKPlan(GemmTile.SHORT, 64, 0);
        StreamKPlan thinTiles = new StreamKPlan(GemmTile.SHORT_THIN, 64, 0);
        for (StreamKPlan plan : List.of(splitK, streamK, shortTiles, thinTiles)) {
            assertEquals(plan, StreamKPlan.paired(plan, 4096, 4096, SMS));
        }
        assertEquals(new StreamKPlan(GemmTile.NARROW_PAIR, SMS, 0), StreamKPlan.paired(new StreamKPlan(GemmTile.NARROW, SMS, 0), 4096, 4096, SMS));
        assertEquals(new StreamKPlan(GemmTile.MID_PAIR, 96, 0), StreamKPlan.paired(new StreamKPlan(GemmTile.MID, 96, 0), 1536, 1536, SMS),
                "12 x 8 tiles: 48 pairs");
        StreamKPlan oneRow = new StreamKPlan(GemmTile.NARROW, 128, 0);
        assertEquals(oneRow, StreamKPlan.paired(oneRow, 128, 16384, SMS), "one row of 128 tiles: one wave alone, two in pairs");
    }

    @Test
    void pairsHalveTheRowsOfBsBox() {
        assertEquals(Gemm.TILE_N / 2, GemmTile.PAIR.bBoxRows());
        assertEquals(Gemm.TILE_N, GemmTile.WIDE.bBoxRows());
        assertEquals(Gemm.MID_TILE_N, GemmTile.MID.bBoxRows());
        assertEquals(Gemm.NARROW_TILE_N, GemmTile.NARROW.bBoxRows());
        assertEquals(Gemm.THIN_TILE_N / 2, GemmTile.SHORT_THIN_PAIR.bBoxRows());
        assertEquals(Gemm.SHORT_TILE_M, GemmTile.SHORT_THIN_PAIR.aBoxRows());
        assertEquals(Gemm.THIN_TILE_N, GemmTile.SHORT_THIN_1X2.bBoxRows(), "side by side, the pair shares A, not B");
        assertEquals(Gemm.SHORT_TILE_M / 2, GemmTile.SHORT_THIN_1X2.aBoxRows());
        assertEquals(Gemm.THIN_TILE_N / 2, GemmTile.SHORT_THIN_2X2.bBoxRows());
        assertEquals(Gemm.SHORT_TILE_M / 2, GemmTile.SHORT_THIN_2X2.aBoxRows());
        assertEquals(Gemm.THIN_TILE_N / 4, GemmTile.SHORT_THIN_4X1.bBoxRows());
        assertEquals(Gemm.SHORT_TILE_M / 4, GemmTile.SHORT_THIN_1X4.aBoxRows());
    }

    @Test
    void plansSayWhatTheyAre() {
        assertEquals("whole tiles on 132 blocks, in pairs", new StreamKPlan(GemmTile.PAIR, 132, 0).describe(640));
        assertEquals("whole tiles on 64 blocks", new StreamKPlan(GemmTile.WIDE, 64, 0).describe(64));
        assertEquals("whole tiles on 64 blocks, 128 x 128 tiles", new StreamKPlan(GemmTile.NARROW, 64, 0).describe(64));
        assertEquals("whole tiles on 96 blocks, 128 x 192 tiles", new StreamKPlan(GemmTile.MID, 96, 0).describe(96));
        assertEquals("split-K on 64 blocks, 32 tiles in 2 slices of K, 64 x 128 tiles", new StreamKPlan(GemmTile.SHORT, 64, 32).describe(32));
        assertEquals("whole tiles on 128 blocks, 64 x 64 tiles", new StreamKPlan(GemmTile.SHORT_THIN, 128, 0).describe(128));
        assertEquals("whole tiles on 66 blocks, 64 x 128 tiles in pairs", new StreamKPlan(GemmTile.SHORT_PAIR, 66, 0).describe(66));
        assertEquals("whole tiles on 128 blocks, 64 x 64 tiles in pairs", new StreamKPlan(GemmTile.SHORT_THIN_PAIR, 128, 0).describe(128));
        assertEquals("whole tiles on 112 blocks, 64 x 64 tiles in blocks of 2 x 2", new StreamKPlan(GemmTile.SHORT_THIN_2X2, 112, 0).describe(112));
        assertEquals("split-K on 128 blocks, 32 tiles in 4 slices of K", new StreamKPlan(GemmTile.WIDE, 128, 32).describe(32));
        assertEquals("stream-K on 132 blocks, 16 of 16 tiles shared by K", new StreamKPlan(GemmTile.WIDE, 132, 16).describe(16));
        assertEquals("stream-K on 132 blocks, 156 of 288 tiles shared by K", new StreamKPlan(GemmTile.WIDE, 132, 156).describe(288));
    }

    @Test
    void shortTilesRunInPairsOnlyOverAShortKAndSeveralTileRows() {
        // GemmPlanTimes at 73707d3: faster in pairs at K 1000-1032, slower at K 2048 and more.
        int most = ScheduleCost.SHORT_PAIR_MAX_K_BLOCKS;
        assertTrue(StreamKPlan.candidates(128, 8192, most, SMS, true).contains(StreamKPlan.whole(GemmTile.SHORT_PAIR, 128, 8192, SMS)));
        assertTrue(StreamKPlan.candidates(128, 8192, most + 1, SMS, true).stream().noneMatch(p -> p.tile() == GemmTile.SHORT_PAIR),
                "a longer K: no pairs");
        assertTrue(StreamKPlan.candidates(64, 8192, most, SMS, true).stream().noneMatch(p -> p.tile() == GemmTile.SHORT_PAIR),
                "one tile row: a pair's second tile would be past C");
        assertEquals(new StreamKPlan(GemmTile.SHORT_PAIR, 128, 0), choose(1000, 1000, 1000), "16 x 8 tiles of 64 x 128, 64 pairs");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN, 128, 0), choose(128, 4096, 2048), "K 2048: 64 x 64 tiles, unpaired");
    }

    @Test
    void pairedTilesRunOnAnEvenGridOfPairs() {
        assertEquals(new StreamKPlan(GemmTile.SHORT_PAIR, 128, 0), StreamKPlan.whole(GemmTile.SHORT_PAIR, 129, 4096, SMS),
                "3 tile rows make 2 pairs a column, the second half past C: 64 pairs");
        assertEquals(new StreamKPlan(GemmTile.SHORT_PAIR, SMS, 0), StreamKPlan.whole(GemmTile.SHORT_PAIR, 1024, 4096, SMS),
                "512 pairs: one per two SMs, taken in turns");
        assertEquals(new StreamKPlan(GemmTile.PAIR, 4, 0), StreamKPlan.whole(GemmTile.PAIR, 33, 264, SMS), "two pairs, each second tile past C");
        assertEquals(StreamKPlan.whole(GemmTile.PAIR, 4096, 4096, SMS), StreamKPlan.inPairs(StreamKPlan.whole(GemmTile.WIDE, 256, SMS), 4096, 4096, SMS));
        assertEquals(null, StreamKPlan.inPairs(new StreamKPlan(GemmTile.SHORT, 64, 32), 128, 4096, SMS), "a shared plan has no pairs");
        assertEquals(new StreamKPlan(GemmTile.NARROW_PAIR, 64, 0), StreamKPlan.inPairs(StreamKPlan.whole(GemmTile.NARROW, 32, SMS), 128, 4096, SMS),
                "one tile row: 32 pairs, each second tile past C");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_PAIR, 128, 0), StreamKPlan.inPairs(StreamKPlan.whole(GemmTile.SHORT_THIN, 64, SMS), 64, 4096, SMS),
                "one tile row of 64 x 64: 64 pairs, each second tile past C");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_PAIR, 128, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_PAIR, 128, 4096, SMS),
                "two tile rows of 64: one pair a column, as cuBLASLt runs 128 x 4096 x 2048");
        assertEquals(null, StreamKPlan.inPairs(StreamKPlan.whole(GemmTile.SHORT_THIN_PAIR, 128, 4096, SMS), 128, 4096, SMS), "pairs have no pairs");
        assertEquals(List.of(new StreamKPlan(GemmTile.SHORT_THIN_PAIR, 112, 0), new StreamKPlan(GemmTile.SHORT_THIN_1X2, 56, 0),
                        new StreamKPlan(GemmTile.SHORT_THIN_2X2, 112, 0), new StreamKPlan(GemmTile.SHORT_THIN_4X1, 132, 0),
                        new StreamKPlan(GemmTile.SHORT_THIN_1X4, 56, 0)),
                GemmTile.SHORT_THIN.inClusters().stream().map(t -> StreamKPlan.whole(t, 64, 3584, SMS)).toList(),
                "one tile row of 56 tiles of 64 x 64: blocks of one row put no CTA past C, of two rows half of them (28 blocks of"
                        + " 2 x 2), of four three quarters (56 blocks of 4 x 1, 33 clusters at a time)");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_1X2, 16, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_1X2, 64, 900, SMS),
                "15 tiles of 64 columns in a row: 8 pairs, the last one's second tile past C");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_1X2, 30, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_1X2, 129, 640, SMS),
                "3 tile rows of 10 tiles: 15 pairs side by side");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_2X2, 112, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_2X2, 256, 1792, SMS),
                "4 x 28 tiles: 2 x 14 blocks of 2 x 2");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_4X1, 132, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_4X1, 256, 4096, SMS),
                "4 x 64 tiles: 64 blocks of four on 33 clusters, taken in turns");
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_1X4, 132, 0), StreamKPlan.whole(GemmTile.SHORT_THIN_1X4, 4096, 4096, SMS),
                "33 clusters of four fill the 132 SMs");
        assertEquals(List.of(), GemmTile.SHORT_THIN_1X4.inClusters(), "clusters have no clusters");
    }

    @Test
    void clustersShareTheirBlocksOutByKAsCtasShareTiles() {
        // 64 x 3584 x 4096: one row of 56 tiles of 64 x 64, 14 blocks of 1 x 4 on 33 clusters of four.
        GemmTile[] rowOfFour = {GemmTile.SHORT_THIN_1X4};
        assertEquals(List.of(new StreamKPlan(GemmTile.SHORT_THIN_1X4, 56, 0), new StreamKPlan(GemmTile.SHORT_THIN_1X4, 112, 14),
                        new StreamKPlan(GemmTile.SHORT_THIN_1X4, 132, 14)),
                StreamKPlan.candidates(rowOfFour, 64, 3584, 64, SMS, false).stream().sorted(Comparator.comparingInt(StreamKPlan::grid)).toList(),
                "whole blocks on 14 clusters; 2 slices of K on 28 (3 would need 42); stream-K on all 33");
        StreamKPlan split = new StreamKPlan(GemmTile.SHORT_THIN_1X4, 112, 14);
        assertEquals(14, split.units(64, 3584));
        assertEquals(28, split.clusters());
        assertTrue(split.isSplitK(14));
        assertEquals("split-K on 112 blocks, 14 blocks in 2 slices of K, 64 x 64 tiles in blocks of 1 x 4", split.describe(14));
        assertEquals("stream-K on 132 blocks, 14 of 14 blocks shared by K, 64 x 64 tiles in blocks of 1 x 4",
                new StreamKPlan(GemmTile.SHORT_THIN_1X4, 132, 14).describe(14));
        assertEquals("split-K on 128 blocks, 32 pairs in 2 slices of K, 64 x 64 tiles in pairs",
                new StreamKPlan(GemmTile.SHORT_THIN_PAIR, 128, 32).describe(32));
        // 80 pairs on 66 clusters of two: 14 past the first wave; 3 clusters a pair divides 66 (22 pairs).
        assertEquals(new StreamKPlan(GemmTile.SHORT_THIN_PAIR, SMS, 22), StreamKPlan.tail(GemmTile.SHORT_THIN_PAIR, 80, 64, SMS));
        assertNull(StreamKPlan.shared(GemmTile.SHORT_THIN_1X4, 14, 64, 3), "fewer SMs than a cluster: no clusters at all");
        // A cluster's CTAs run their k-blocks side by side: 14 blocks whole are one wave of 64 k-blocks.
        assertEquals(64 * ScheduleCost.SHORT_THIN_K_BLOCK_US + ScheduleCost.LAUNCH_US + ScheduleCost.WHOLE_WAVE_US,
                ScheduleCost.us(new StreamKPlan(GemmTile.SHORT_THIN_1X4, 56, 0), 64, 3584, 64, SMS, false), 1e-9);
    }

    @Test
    void swappedTilesPlanTheirProduct() {
        // 32 x 4096 x 1024: C^T is 4096 x 32, 64 tiles of 64 x 32 (C's 32 rows by 64 columns each).
        assertEquals(64, GemmTile.SWAP_32.tiles(32, 4096));
        assertEquals(128, GemmTile.SWAP_16.tiles(32, 4096), "16 rows of C a tile: two tiles a column of C^T");
        assertEquals(64, GemmTile.SWAP_32_PAIR.blocks(64, 4096), "64 rows of C: one block of two tiles per 64 columns");
        assertEquals(new StreamKPlan(GemmTile.SWAP_32, 64, 0), StreamKPlan.whole(GemmTile.SWAP_32, 32, 4096, SMS));
        assertEquals(new StreamKPlan(GemmTile.SWAP_32_PAIR, 128, 0), StreamKPlan.whole(GemmTile.SWAP_32_PAIR, 64, 4096, SMS));
        assertEquals(List.of(GemmTile.SWAP_32_PAIR), GemmTile.SWAP_32.inClusters(), "the swapped tiles' clusters are swapped ones");
        assertEquals(List.of(), GemmTile.SHORT.inClusters().stream().filter(GemmTile::swapped).toList());
        assertEquals("whole tiles on 64 blocks, 32 x 64 swapped tiles", StreamKPlan.whole(GemmTile.SWAP_32, 32, 4096, SMS).describe(64));
        assertEquals("split-K on 128 blocks, 64 tiles in 2 slices of K, 32 x 64 swapped tiles",
                new StreamKPlan(GemmTile.SWAP_32, 128, 64).describe(64));
        assertEquals("whole tiles on 128 blocks, 32 x 64 swapped tiles in blocks of 2 x 1",
                StreamKPlan.whole(GemmTile.SWAP_32_PAIR, 64, 4096, SMS).describe(64), "two tiles of C one above the other");
        // As the product: 64 tiles of 16 k-blocks, one wave.
        assertEquals(16 * ScheduleCost.SHORT_THIN_K_BLOCK_US + ScheduleCost.LAUNCH_US + ScheduleCost.WHOLE_WAVE_US,
                ScheduleCost.us(new StreamKPlan(GemmTile.SWAP_32, 64, 0), 32, 4096, 16, SMS, false), 1e-9);
        assertEquals(8, GemmTile.SWAP_8.bBoxRows(), "A's box: the tile's 8 rows of C");
        assertEquals(Gemm.SHORT_TILE_M / 2, GemmTile.SWAP_32_PAIR.aBoxRows(), "B's box: each CTA's share of the 64 rows of B");
        // 32 rows of C in 16-row tiles, two of them one above the other sharing B: cuBLASLt's one wave.
        assertEquals(List.of(GemmTile.SWAP_16_PAIR), GemmTile.SWAP_16.inClusters());
        assertEquals(64, GemmTile.SWAP_16_PAIR.blocks(32, 4096), "one block of two 16-row tiles per 64 columns");
        assertEquals(new StreamKPlan(GemmTile.SWAP_16_PAIR, 128, 0), StreamKPlan.whole(GemmTile.SWAP_16_PAIR, 32, 4096, SMS));
        assertEquals("whole tiles on 128 blocks, 16 x 64 swapped tiles in blocks of 2 x 1",
                StreamKPlan.whole(GemmTile.SWAP_16_PAIR, 32, 4096, SMS).describe(32));
        assertEquals(16, GemmTile.SWAP_16_PAIR.bBoxRows(), "A's box: the tile's 16 rows of C");
        assertEquals(Gemm.SHORT_TILE_M / 2, GemmTile.SWAP_16_PAIR.aBoxRows(), "B's box: each CTA's half of the 64 rows of B");
        assertEquals(GemmTile.SWAP_16, GemmTile.swappedFor(16), "not a tile of the rule");
        assertEquals(GemmTile.SWAP_32, GemmTile.swappedFor(32));
    }

    @Test
    void theWorkspaceHoldsTwoTilesOfF32PerSm() {
        assertEquals(2L * SMS * 128 * 256 * 4, StreamKPlan.partialBytes(SMS));
        assertEquals(2L * (2 * SMS - 1) * 4, StreamKPlan.counterBytes(StreamKPlan.maxSharedTiles(SMS)));
    }

    /** The rule pairs only where K is off 64 (StreamKPlan.pairsPay): there pairs were faster, elsewhere level or slower. */
    @Test
    void theRulePairsOnlyWhereKIsOffTheSwizzleRow() {
        assertTrue(StreamKPlan.pairsPay(2000));
        assertTrue(StreamKPlan.pairsPay(1032));
        assertFalse(StreamKPlan.pairsPay(4096));
        assertEquals(GemmTile.PAIR, Gemm.plan(2049, 3000, 2000, SMS, true).tile(), "K 2000: pairs");
        assertEquals(GemmTile.SHORT_PAIR, Gemm.plan(1000, 1000, 1000, SMS, true).tile(), "K 1000: 64 x 128 tiles in pairs");
        assertEquals(GemmTile.NARROW, Gemm.plan(256, 6144, 4096, SMS, true).tile(), "K 4096: 128 x 128 tiles alone");
        assertEquals(GemmTile.SHORT, Gemm.plan(128, 8192, 1024, SMS, true).tile(), "K 1024: 64 x 128 tiles alone");
        assertTrue(StreamKPlan.candidates(1000, 1000, 16, SMS, false).stream().noneMatch(p -> p.tile().clusterM() == 2),
                "without pairs, none are candidates");
        assertEquals(StreamKPlan.candidates(1000, 1000, 16, SMS, false).get(0), StreamKPlan.rule(1000, 1000, 16, SMS, null, false));
    }
}

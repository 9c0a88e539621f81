package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import org.junit.jupiter.api.Test;

class StreamKPlanTest {
    private static final int SMS = 132;

    @Test
    void tilesThatFillTheirWavesRunWhole() {
        assertEquals(new StreamKPlan(SMS, 0), StreamKPlan.choose(64 * 32, 128, SMS), "8192 x 8192: 15.5 waves, 97 % full");
        assertEquals(new StreamKPlan(SMS, 0), StreamKPlan.choose(640, 47, SMS), "4000 x 5000 x 3000: 4.85 waves, 97 % full");
        assertEquals(new StreamKPlan(120, 0), StreamKPlan.choose(120, 64, SMS), "120 tiles on 132 SMs: 91 % busy");
    }

    @Test
    void fewTilesAreSharedOverEverySm() {
        assertEquals(new StreamKPlan(SMS, 16), StreamKPlan.choose(16, 224, SMS), "1 x 4096 x 14336: 16 tiles, 224 k-blocks each");
        assertEquals(new StreamKPlan(SMS, 72), StreamKPlan.choose(72, 24, SMS), "1536^3");
    }

    @Test
    void aCtaGetsAtLeastTheLeastBlocks() {
        StreamKPlan plan = StreamKPlan.choose(3, 64, SMS);   // 1 x 768 x 4096: 192 k-blocks in all
        assertEquals(new StreamKPlan(192 / KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS, 3), plan);
        assertEquals(StreamKPlan.whole(50, SMS), StreamKPlan.choose(50, 1, SMS), "K = 64: 50 iterations cannot use more CTAs than 50 whole tiles");
        assertEquals(StreamKPlan.whole(2, SMS), StreamKPlan.choose(2, 2, SMS), "4 iterations: one CTA, fewer than the tiles");
    }

    @Test
    void aMostlyEmptyLastWaveIsSharedWithTheFullWaveBeforeIt() {
        StreamKPlan plan = StreamKPlan.choose(288, 16, SMS);   // 4096 x 2304 x 1024: 2.18 waves
        assertEquals(new StreamKPlan(SMS, 288 % SMS + SMS), plan, "132 whole tiles, then 156 shared");
        assertEquals(new StreamKPlan(SMS, 160), StreamKPlan.choose(160, 16, SMS), "1.21 waves: every tile shared");
        assertEquals(StreamKPlan.whole(160, SMS), StreamKPlan.choose(160, 1, SMS), "too few k-blocks for one SM each");
    }

    @Test
    void sharedTilesNeverExceedTheCounters() {
        for (int tiles = 1; tiles < 20 * SMS; tiles++) {
            for (int kBlocks : new int[] {1, 3, 4, 16, 200}) {
                StreamKPlan plan = StreamKPlan.choose(tiles, kBlocks, SMS);
                int t = tiles;
                assertTrue(plan.sharedTiles() <= StreamKPlan.maxSharedTiles(SMS), () -> t + " tiles: " + plan);
                assertTrue(plan.grid() >= 1 && plan.grid() <= SMS, () -> t + " tiles: " + plan);
                assertTrue(plan.sharedTiles() == 0 || (long) plan.sharedTiles() * kBlocks >= (long) plan.grid() * KernelAbi.IRIS_GEMM_STREAM_K_MIN_BLOCKS,
                        () -> t + " tiles of " + kBlocks + " k-blocks: " + plan + " gives a CTA fewer than the least k-blocks");
            }
        }
    }

    @Test
    void theWorkspaceHoldsTwoTilesOfF32PerSm() {
        assertEquals(2L * SMS * 128 * 256 * 4, StreamKPlan.partialBytes(SMS));
        assertEquals(2L * (2 * SMS - 1) * 4, StreamKPlan.counterBytes(StreamKPlan.maxSharedTiles(SMS)));
    }
}

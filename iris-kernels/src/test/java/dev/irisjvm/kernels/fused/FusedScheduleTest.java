package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.kernels.HostPrograms;
import dev.irisjvm.kernels.gemm.Gemm;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fused kernels' orders against the kernels' own code, on the CPU: the host program
 * src/test/native/fused_schedule.cu runs fused_common.cuh's row owners and tile order,
 * split_k_exchange.cuh's halves and all_gather_hooks.cuh's push order on every rank of each case
 * below, and holds them against what {@link FusedWorkspace} allocates for the same call: every
 * tile once in the owners' order, every tile's two halves with split-K, every piece of a rank's
 * rows pushed once, the reductions' slot rows and the all-gather's flags and pieces as the
 * kernels index them.
 */
class FusedScheduleTest {
    private static final int[] WORLDS = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final int[] GROUPS = {1, 3, 8};
    private static final int[] TILE_NS = {Gemm.TILE_N, Gemm.NARROW_TILE_N};

    @Test
    void everyRankVisitsEveryTileOnceInItsOwnersOrder() throws Exception {
        // All-reduce takes any M (its owners' blocks then differ by a tile row); the others M of whole tiles per rank.
        long[] rows = {1, 127, 128, 129, 300, 1000, 1024, 3072, 8192};
        long[] cols = {8, 256, 264, 1000, 3584, 8192};
        List<String> lines = new ArrayList<>();
        for (long m : rows) {
            for (long n : cols) {
                for (int tileN : TILE_NS) {
                    for (int group : GROUPS) {
                        for (int world : WORLDS) {
                            lines.add("order " + m + " " + n + " " + tileN + " " + group + " " + world + " " + FusedWorkspace.rowsPerOwner(m, world));
                        }
                    }
                }
            }
        }
        List<String> answers = HostPrograms.okAnswers("fused_schedule", lines, "");
        // 1000 x 3584 on 128 x 256 tiles: 8 tile rows by 14 tile columns.
        assertEquals("ok tiles 112", answers.get(lines.indexOf("order 1000 3584 256 1 2 512")));
    }

    @Test
    void everyRankPushesEachPieceOfItsRowsOnceIntoTheFlagsTheHostAllocates() throws Exception {
        long[] depths = {64, 128, 1000, FusedOp.MIN_SPLIT_K, 4096, 8200, 16384};
        int[] grids = {1, 66, 132};
        List<String> lines = new ArrayList<>();
        for (int world : WORLDS) {
            for (long tileRows : new long[] {1, 2, 3, 8, 21}) {
                long m = tileRows * Gemm.TILE_M * world;  // all-gather splits M into whole tile rows per rank
                for (long k : depths) {
                    for (int tileN : TILE_NS) {
                        for (int group : GROUPS) {
                            for (int splitK = 1; splitK <= (k >= FusedOp.MIN_SPLIT_K ? 2 : 1); splitK++) {
                                for (int blocks : grids) {
                                    long n = 1792;
                                    lines.add("gather " + m + " " + n + " " + k + " " + tileN + " " + world + " " + group + " " + splitK + " " + blocks
                                            + " " + FusedWorkspace.gatherFlags(m, n, k, world, blocks, tileN, splitK) + " "
                                            + FusedWorkspace.gatherPieces(m, k, world));
                                }
                            }
                        }
                    }
                }
            }
        }
        List<String> answers = HostPrograms.okAnswers("fused_schedule", lines, "");
        // 2 ranks of 8 tile rows each, K 8200 in 65 pieces of 128 columns; split-K on 132 blocks: 16 x 65
        // ready flags, 2 clear flags, 132 claims, then 4 words for each of 16 x 7 tiles.
        assertEquals("ok pieces 520 flag_words " + (16 * 65 + 2 + 132 + 16 * 7 * 4),
                answers.get(lines.indexOf("gather 2048 1792 8200 256 2 8 2 132 " + (16 * 65 + 2 + 132 + 16 * 7 * 4) + " 520")));
    }
}

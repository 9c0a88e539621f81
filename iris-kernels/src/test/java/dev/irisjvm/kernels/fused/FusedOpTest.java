package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Kernel names, variants, the AUTO rule and the config's checks. */
class FusedOpTest {
    /** The SMs of an H100 or H200, the blocks AUTO is asked about unless a case says otherwise. */
    private static final int SMS = 132;

    @Test
    void kernelNames() {
        int wide = Gemm.TILE_N;
        assertEquals("iris_gemm_all_scatter_epilogue_bf16_nk",
                FusedOp.ALL_SCATTER.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.NK, wide, false));
        assertEquals("iris_gemm_all_scatter_spare_warps_f16_kn_traced",
                FusedOp.ALL_SCATTER.kernelName(FusedVariant.SPARE_WARPS, DType.F16, GemmLayout.KN, wide, true));
        assertEquals("iris_gemm_all_reduce_epilogue_bf16_kn",
                FusedOp.ALL_REDUCE.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.KN, wide, false));
        assertEquals("iris_gemm_reduce_scatter_spare_warps_bf16_nk_traced",
                FusedOp.REDUCE_SCATTER.kernelName(FusedVariant.SPARE_WARPS, DType.BF16, GemmLayout.NK, wide, true));
        assertEquals("iris_all_gather_gemm_f16_nk",
                FusedOp.ALL_GATHER.kernelName(FusedVariant.SPARE_WARPS, DType.F16, GemmLayout.NK, wide, false));
        assertEquals("iris_all_gather_gemm_n128_bf16_kn_traced",
                FusedOp.ALL_GATHER.kernelName(FusedVariant.SPARE_WARPS, DType.BF16, GemmLayout.KN, Gemm.NARROW_TILE_N, true));
        assertThrows(IllegalArgumentException.class,
                () -> FusedOp.ALL_GATHER.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.NK, wide, false));
        assertThrows(IllegalArgumentException.class,
                () -> FusedOp.ALL_REDUCE.kernelName(FusedVariant.EPILOGUE, DType.F32, GemmLayout.NK, wide, false));
        assertThrows(IllegalArgumentException.class,
                () -> FusedOp.ALL_REDUCE.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.NK, Gemm.NARROW_TILE_N, false));
    }

    @Test
    void portableKernels() {
        assertEquals("iris_gemm_all_scatter_portable_bf16_nk", FusedOp.ALL_SCATTER.portableKernelName(DType.BF16, GemmLayout.NK));
        assertEquals("iris_gemm_all_reduce_portable_f16_kn", FusedOp.ALL_REDUCE.portableKernelName(DType.F16, GemmLayout.KN));
        assertEquals("iris_gemm_reduce_scatter_portable_bf16_kn",
                FusedOp.REDUCE_SCATTER.portableKernelName(DType.BF16, GemmLayout.KN));
        assertEquals("iris_all_gather_gemm_portable_f16_nk", FusedOp.ALL_GATHER.portableKernelName(DType.F16, GemmLayout.NK));
        assertThrows(IllegalArgumentException.class, () -> FusedOp.ALL_REDUCE.portableKernelName(DType.F32, GemmLayout.NK));
        for (FusedOp op : FusedOp.values()) {
            assertEquals(FusedOp.PORTABLE_MODULE, op.module(GemmMainloop.PORTABLE));
            assertEquals(op.module(), op.module(GemmMainloop.HOPPER));
            boolean unfused = op != FusedOp.ALL_SCATTER;
            assertEquals(op == FusedOp.ALL_REDUCE || op == FusedOp.REDUCE_SCATTER, op.reduces(), op.toString());
            assertEquals(unfused ? Set.of(FusedVariant.EPILOGUE, FusedVariant.UNFUSED) : Set.of(FusedVariant.EPILOGUE),
                    op.variants(GemmMainloop.PORTABLE), "the portable kernels' one variant, and no kernel");
            assertFalse(op.kernelVariants().contains(FusedVariant.UNFUSED));
            assertEquals(unfused, op.variants().contains(FusedVariant.UNFUSED));
            assertEquals(op.variants(), op.variants(GemmMainloop.HOPPER));
            assertEquals(List.of(Gemm.TILE_N), op.tileWidths(GemmMainloop.PORTABLE));
            assertFalse(op.splitsK(GemmMainloop.PORTABLE));
            assertEquals(op.splitsK(), op.splitsK(GemmMainloop.HOPPER));
            assertThrows(IllegalArgumentException.class, () -> op.variants(GemmMainloop.AUTO), "AUTO is resolved first");
        }
    }

    @Test
    void tileWidth() {
        // 1024 x 1792 (all-gather 1024 x 3584 x 8192 on 2 ranks): 8 x 7 = 56 wide tiles on 132 SMs: narrow ones, 112.
        assertEquals(Gemm.NARROW_TILE_N, FusedOp.ALL_GATHER.tileN(1024, 1792, 132));
        assertEquals(8L * 14, FusedWorkspace.tiles(1024, 1792, Gemm.NARROW_TILE_N));
        // 8 x 9 = 72 wide tiles fill more than half of 132 SMs; so do 56 of 111 (a block limit).
        assertEquals(Gemm.TILE_N, FusedOp.ALL_GATHER.tileN(1024, 2304, 132));
        assertEquals(Gemm.NARROW_TILE_N, FusedOp.ALL_GATHER.tileN(1024, 1792, 112));
        assertEquals(Gemm.TILE_N, FusedOp.ALL_GATHER.tileN(1024, 1792, 111));
        assertEquals(Gemm.TILE_N, FusedOp.ALL_GATHER.tileN(8192, 4096, 132));
        // All-scatter at 8192 x 2304 (8192 x 4608 x 36864 on 2 ranks): 576 wide tiles are 5 waves on
        // 132 SMs (5 x 256 columns), 768 of 192 columns 6 (6 x 192 = 1152): 128 x 192.
        assertEquals(Gemm.MID_TILE_N, FusedOp.ALL_SCATTER.tileN(8192, 2304, 132));
        // 8192 x 4096: 1024 wide tiles, 8 waves (2048), against 64 x 22 = 1408 of 192, 11 waves (2112).
        assertEquals(Gemm.TILE_N, FusedOp.ALL_SCATTER.tileN(8192, 4096, 132));
        // 4096 x 2048: 256 wide tiles, 2 waves (512), against 32 x 11 = 352, 3 waves (576).
        assertEquals(Gemm.TILE_N, FusedOp.ALL_SCATTER.tileN(4096, 2048, 132));
        // The reductions' kernels come in 128 x 256 only.
        assertEquals(Gemm.TILE_N, FusedOp.ALL_REDUCE.tileN(1024, 1792, 132));
        assertEquals(Gemm.TILE_N, FusedOp.REDUCE_SCATTER.tileN(8192, 2304, 132));
    }

    @Test
    void splitKRule() {
        // 1024 x 1792 x 8192 (all-gather 1024 x 3584 x 8192 on 2 ranks): 56 wide tiles fill at most
        // half of 132 SMs, so two blocks per tile; 72 (1024 x 2304) do not.
        assertEquals(2, FusedOp.ALL_GATHER.splitK(1024, 1792, 8192, 132));
        assertEquals(1, FusedOp.ALL_GATHER.splitK(1024, 2304, 8192, 132));
        assertEquals(2, FusedOp.ALL_GATHER.splitK(1024, 1792, 8192, 112));
        assertEquals(1, FusedOp.ALL_GATHER.splitK(1024, 1792, 8192, 111));
        // K below MIN_SPLIT_K stays whole.
        assertEquals(2, FusedOp.ALL_GATHER.splitK(1024, 1792, FusedOp.MIN_SPLIT_K, 132));
        assertEquals(1, FusedOp.ALL_GATHER.splitK(1024, 1792, FusedOp.MIN_SPLIT_K - 8, 132));
        for (FusedOp op : FusedOp.values()) {
            assertEquals(op == FusedOp.ALL_GATHER, op.splitsK(), op.toString());
            if (op != FusedOp.ALL_GATHER) {
                assertEquals(1, op.splitK(1024, 1792, 8192, 132), op.toString());
            }
        }
    }

    @Test
    void blocks() {
        // One per unit up to the limit.
        assertEquals(64, FusedGemm.blocks(FusedOp.ALL_REDUCE, 2, 132, 64, 1));
        assertEquals(132, FusedGemm.blocks(FusedOp.ALL_SCATTER, 2, 132, 2048, 1));
        // All-gather takes every block it may: the ones without a unit push rows of A; alone it has nothing to push.
        assertEquals(132, FusedGemm.blocks(FusedOp.ALL_GATHER, 2, 132, 112, 2));
        assertEquals(112, FusedGemm.blocks(FusedOp.ALL_GATHER, 1, 132, 112, 2));
        // Split-K over several rounds: an even grid, so that a tile's two halves share a round.
        assertEquals(2, FusedGemm.blocks(FusedOp.ALL_GATHER, 2, 3, 8, 2));
        assertEquals(3, FusedGemm.blocks(FusedOp.ALL_GATHER, 2, 3, 8, 1));
        assertEquals(8, FusedGemm.blocks(FusedOp.ALL_GATHER, 1, 9, 8, 2));
    }

    @Test
    void autoRule() {
        // Measured (TP 2): the spare warps win once tiles outnumber SMs (8192^3: 750 against 778 us;
        // 4096^3: 125 against 130), the epilogue kernel below (2048^3: 37.1 against 40.4 us).
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 8192, 4096, 8192));
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 4096, 2048, 4096));
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 2048, 1024, 2048));
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 1024, 1792, 8192));
        // 132 tiles of 128 x 256 fill the SMs once: no next tile, no spare warps; 133 need a second wave.
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 128 * 132, 256, 4096));
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 128 * 133, 256, 4096));
        // The same problem on fewer blocks (FusedConfig.withMaxBlocks) has more tiles per block.
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 2048, 1024, 2048, 32));
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 8192, 8192, 4096));
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 8192, 8192, 4096));
        // GEMM + all-reduce with few tiles: at 8 x 8192 x 14336 on one H200 the fused kernel took 142 µs,
        // the GEMM then the all-reduce 63 (fused-small-m-world1-2026-12-05-b5d43b2.json).
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 8, 8192, 7168));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 256, 8192, 7168),
                "64 tiles: at most half of the SMs");
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_REDUCE, GemmMainloop.HOPPER, 384, 8192, 7168),
                "96 tiles");
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 256, 8192, 7168),
                "reduce-scatter: the same kernel");
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_SCATTER, GemmMainloop.HOPPER, 256, 8192, 7168),
                "all-scatter has no UNFUSED: 64 tiles, one wave, the epilogue variant");
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_REDUCE, GemmMainloop.PORTABLE, 8, 8192, 7168),
                "the portable GEMM does not split K either");
        // Rows that the kernels cannot split in whole tiles per rank: reduce-scatter and all-gather run
        // UNFUSED on either mainloop, however many tiles.
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 8, 8192, 7168));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 8194, 8192, 4096),
                "2 080 tiles, but 4097 rows per rank");
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 8192, 8192, 4096));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.PORTABLE, 64, 8192, 7168));
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.PORTABLE, 256, 8192, 7168));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 64, 8192, 7168));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 64, 8192, 7168));
        assertEquals(FusedVariant.UNFUSED, auto(FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 8194, 8192, 4096),
                "all-gather: 4097 rows per rank");
        // All-gather's kernel splits few tiles by K itself: it keeps its kernel where it takes the rows, however few the tiles.
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 256, 8192, 7168),
                "64 tiles, whole tiles per rank");
        assertEquals(FusedVariant.EPILOGUE, auto(FusedOp.ALL_GATHER, GemmMainloop.PORTABLE, 256, 8192, 7168));
        assertFalse(FusedOp.ALL_GATHER.kernelsTakeRows(128, 2));
        assertTrue(FusedOp.ALL_GATHER.onlyUnfusedTakesRows(128, 2));
        assertFalse(FusedOp.ALL_SCATTER.onlyUnfusedTakesRows(100, 2), "all-scatter splits no rows");
        assertFalse(FusedOp.REDUCE_SCATTER.kernelsTakeRows(128, 2));
        assertTrue(FusedOp.REDUCE_SCATTER.kernelsTakeRows(256, 2));
        assertTrue(FusedOp.ALL_REDUCE.kernelsTakeRows(1, 2));
        assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.UNFUSED.kernels(GemmMainloop.HOPPER), "what its calls with ldc > N run");
        assertEquals(FusedVariant.EPILOGUE, FusedVariant.UNFUSED.kernels(GemmMainloop.PORTABLE));
        assertEquals(FusedVariant.EPILOGUE, FusedVariant.EPILOGUE.kernels(GemmMainloop.HOPPER));
        assertThrows(IllegalArgumentException.class, () -> FusedVariant.AUTO.kernels(GemmMainloop.HOPPER));
        assertThrows(IllegalArgumentException.class, () -> FusedOp.ALL_REDUCE.kernelName(FusedVariant.UNFUSED, DType.BF16, GemmLayout.NK,
                Gemm.TILE_N, false), "UNFUSED has no kernel");
        // Measured: at 8192 x 4096 x 12288 (TP 2) the epilogue variant took 655-664 us, the spare warps 615-617.
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.REDUCE_SCATTER, GemmMainloop.HOPPER, 8192, 4096, 6144));
        assertEquals(FusedVariant.SPARE_WARPS, auto(FusedOp.ALL_GATHER, GemmMainloop.HOPPER, 8192, 4096, 8192));
        for (FusedOp op : FusedOp.values()) {
            for (long size : new long[] {128, 1024, 8192}) {
                assertTrue(op.variants().contains(FusedVariant.choose(op, size, size, size, 2, SMS)), op + " " + size);
            }
            assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.SPARE_WARPS.resolve(op, GemmMainloop.HOPPER, 1, 1, 1, 2, SMS));
            // The portable kernels have no other variant; an explicit one is left for the check to refuse.
            assertEquals(FusedVariant.EPILOGUE, auto(op, GemmMainloop.PORTABLE, 8192, 8192, 8192));
            assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.SPARE_WARPS.resolve(op, GemmMainloop.PORTABLE, 1, 1, 1, 2, SMS));
        }
    }

    /** What AUTO resolves for {@code op} at TP 2 on {@code blocks} blocks. */
    private static FusedVariant auto(FusedOp op, GemmMainloop mainloop, int m, int n, int k, int blocks) {
        return FusedVariant.AUTO.resolve(op, mainloop, m, n, k, 2, blocks);
    }

    /** {@link #auto(FusedOp, GemmMainloop, int, int, int, int)} on {@link #SMS} blocks. */
    private static FusedVariant auto(FusedOp op, GemmMainloop mainloop, int m, int n, int k) {
        return auto(op, mainloop, m, n, k, SMS);
    }

    @Test
    void config() {
        FusedConfig c = FusedConfig.defaults();
        assertEquals(8, c.groupM());
        assertEquals(FusedVariant.AUTO, c.variant());
        assertEquals(false, c.tracing());
        assertEquals(0, c.maxBlocks());
        assertEquals(0, c.tileN());
        assertEquals(0, c.splitK());
        assertEquals(GemmMainloop.AUTO, c.mainloop());
        assertEquals(new FusedConfig(4, FusedVariant.EPILOGUE, true, 66, 192, 2, GemmMainloop.PORTABLE),
                c.withGroupM(4).withVariant(FusedVariant.EPILOGUE).withTracing(true).withMaxBlocks(66).withTileN(192).withSplitK(2)
                        .withMainloop(GemmMainloop.PORTABLE));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withMainloop(null)).getMessage().contains("mainloop must not be null"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withSplitK(3)).getMessage().contains("splitK must be 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withTileN(-1)).getMessage().contains("tileN must be >= 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withGroupM(0)).getMessage().contains("groupM must be >= 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withVariant(null)).getMessage().contains("variant must not be null"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> c.withMaxBlocks(-1)).getMessage().contains("maxBlocks must be >= 0"));
    }

    @Test
    void sites() {
        assertTrue(FusedSites.describe(FusedSites.PARTIAL_FLAG).startsWith("GEMM + all-reduce / reduce-scatter: waiting for a peer's partial"));
        assertTrue(FusedSites.describe(FusedSites.GATHERED_ROWS).startsWith("all-gather + GEMM"));
        assertTrue(FusedSites.describe(FusedSites.HANDOFF).contains("spare warps"));
        assertTrue(FusedSites.describe(FusedSites.GATHER_CLEAR).startsWith("all-gather + GEMM"));
        assertTrue(FusedSites.describe(FusedSites.SPLIT_PARTIAL).startsWith("all-gather + GEMM, split-K"));
        assertTrue(FusedSites.describe(FusedSites.SHARED_BYTES).contains("shared memory"));
        assertEquals(null, FusedSites.describe(9007), "retired: split-K's odd-grid launch check");
        assertEquals(null, FusedSites.describe(7101));
    }

    @Test
    void describeForTheCreationMeeting() {
        assertEquals("GemmAllReduce M 300 N 264 K 520 groupM 8 AUTO untraced maxBlocks 0 tileN 0 splitK 0",
                FusedGemm.describe(FusedOp.ALL_REDUCE, 300, 264, 520, FusedConfig.defaults()));
    }

    @Test
    void barriersAroundACall() {
        // All-scatter's peers write into C: every call meets them first. Replayable calls meet after
        // zeroing the flags; all-gather alone ends without a barrier.
        for (FusedOp op : FusedOp.values()) {
            assertEquals(op == FusedOp.ALL_SCATTER, op.startsWithBarrier(false), op + " eager");
            assertEquals(true, op.startsWithBarrier(true), op + " replayable");
            assertEquals(op != FusedOp.ALL_GATHER, op.endsWithBarrier(), op + " end");
        }
    }
}

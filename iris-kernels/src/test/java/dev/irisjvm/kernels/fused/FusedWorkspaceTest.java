package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.kernels.gemm.Gemm;
import org.junit.jupiter.api.Test;

/**
 * The workspace and trace sizes, as the kernels' sources define them (reduce_hooks.cuh,
 * fused_common.cuh, all_gather_hooks.cuh, split_k_exchange.cuh, trace.cuh).
 */
class FusedWorkspaceTest {
    @Test
    void tiles() {
        assertEquals(2 * 1, FusedWorkspace.tiles(200, 136));
        assertEquals(3 * 2, FusedWorkspace.tiles(300, 264));
        assertEquals(64 * 32, FusedWorkspace.tiles(8192, 8192));
    }

    @Test
    void reductions() {
        // 300 rows: 3 tile rows, 2 owners: ceil(3 / 2) = 2 tile rows = 256 rows per owner.
        assertEquals(256, FusedWorkspace.rowsPerOwner(300, 2));
        assertEquals(2L * 256 * 264, FusedWorkspace.reduceElements(FusedVariant.EPILOGUE, 300, 264, 2));
        assertEquals(4L * 256 * 264, FusedWorkspace.reduceElements(FusedVariant.SPARE_WARPS, 300, 264, 2));
        assertEquals(2L * 6 * 2, FusedWorkspace.reduceFlags(FusedVariant.EPILOGUE, 300, 264, 2));
        assertEquals(3L * 6 * 2, FusedWorkspace.reduceFlags(FusedVariant.SPARE_WARPS, 300, 264, 2));
        // 8192^2 on 2 ranks with spare warps: 2 x 2 x 4096 x 8192 bf16 = 256 MiB, plus 3 x 2048 x 2 flags.
        assertEquals(4L * 4096 * 8192 * 2 + 3L * 2048 * 2 * 8,
                FusedWorkspace.bytes(FusedOp.ALL_REDUCE, FusedVariant.SPARE_WARPS, 8192, 8192, 4096, 2, Gemm.TILE_N, 1, 132));
    }

    @Test
    void others() {
        assertEquals(0, FusedWorkspace.bytes(FusedOp.ALL_SCATTER, FusedVariant.EPILOGUE, 8192, 4096, 8192, 2, Gemm.TILE_N, 1, 132));
        assertEquals(2048L * 2 * 8, FusedWorkspace.bytes(FusedOp.ALL_SCATTER, FusedVariant.SPARE_WARPS, 8192, 8192, 8192, 2, Gemm.TILE_N, 1,
                132));
        // 128 x 192 tiles: 64 x 43 of them, a handoff flag per tile and consumer.
        assertEquals(64L * 43 * 2 * 8, FusedWorkspace.bytes(FusedOp.ALL_SCATTER, FusedVariant.SPARE_WARPS, 8192, 8192, 8192, 2,
                Gemm.MID_TILE_N, 1, 132));
        // all-gather 8192 x 8192 on 2 ranks and 132 blocks: 64 tile rows x 64 pieces of 128 columns, then
        // 2 clear flags and a push claim per block.
        assertEquals((64L * 64 + 2 + 132) * 8, FusedWorkspace.bytes(FusedOp.ALL_GATHER, FusedVariant.SPARE_WARPS, 8192, 4096, 8192, 2,
                Gemm.TILE_N, 1, 132));
        assertEquals(4L * 5 + 2 + 3, FusedWorkspace.gatherFlags(512, 520, 2, 3));
    }

    @Test
    void splitK() {
        // all-gather 1024 x 1792 x 8192 on 2 ranks and 132 blocks, split-K: 8 x 7 tiles of 128 x 256;
        // 8 x 64 pieces, 2 clear flags, 132 push claims, then 2 exchange flags and 2 tickets per tile;
        // 128 x 256 f32 partials per tile (7 MiB).
        assertEquals(8L * 64 + 2 + 132 + 56 * 4, FusedWorkspace.gatherFlags(1024, 1792, 8192, 2, 132, Gemm.TILE_N, 2));
        assertEquals(8L * 64 + 2 + 132, FusedWorkspace.gatherFlags(1024, 1792, 8192, 2, 132, Gemm.TILE_N, 1));
        assertEquals(56L * 128 * 256, FusedWorkspace.splitPartials(1024, 1792, Gemm.TILE_N, 2));
        assertEquals(0, FusedWorkspace.splitPartials(1024, 1792, Gemm.TILE_N, 1));
        assertEquals((8L * 64 + 2 + 132 + 56 * 4) * 8 + 56L * 128 * 256 * 4,
                FusedWorkspace.bytes(FusedOp.ALL_GATHER, FusedVariant.SPARE_WARPS, 1024, 1792, 8192, 2, Gemm.TILE_N, 2, 132));
        // Its trace has a slot set per unit: 2 x 56 units x 6 + 4 x 64 pieces.
        assertEquals(112L * 6 + 4 * 64, FusedWorkspace.traceRecords(FusedOp.ALL_GATHER, 1024, 1792, 8192, 2, Gemm.TILE_N, 2));
    }

    @Test
    void trace() {
        // all-gather 512 x 136 x 520 on 2 ranks: 4 tile rows, 2 of them this rank's, ceil(520 / 128) = 5 pieces each.
        assertEquals(10, FusedWorkspace.gatherPieces(512, 520, 2));
        assertEquals(4L * 6 + 10, FusedWorkspace.traceRecords(FusedOp.ALL_GATHER, 512, 136, 520, 2, Gemm.TILE_N, 1));
        // The same with 128 x 128 tiles: 4 x 2 tiles.
        assertEquals(8L * 6 + 10, FusedWorkspace.traceRecords(FusedOp.ALL_GATHER, 512, 136, 520, 2, Gemm.NARROW_TILE_N, 1));
        assertEquals(6L * 6, FusedWorkspace.traceRecords(FusedOp.ALL_REDUCE, 300, 264, 520, 2, Gemm.TILE_N, 1));
        assertEquals(0, FusedWorkspace.gatherPieces(512, 520, 1));
    }
}

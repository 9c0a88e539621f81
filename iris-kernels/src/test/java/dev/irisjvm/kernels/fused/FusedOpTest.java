package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmLayout;
import org.junit.jupiter.api.Test;

/** Kernel names, variants, the AUTO rule and the config's checks. */
class FusedOpTest {
    @Test
    void kernelNames() {
        assertEquals("iris_gemm_all_scatter_sequential_bf16_nk",
                FusedOp.ALL_SCATTER.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.NK, false));
        assertEquals("iris_gemm_all_scatter_spare_warps_f16_kn_traced",
                FusedOp.ALL_SCATTER.kernelName(FusedVariant.SPARE_WARPS, DType.F16, GemmLayout.KN, true));
        assertEquals("iris_gemm_all_reduce_epilogue_bf16_kn",
                FusedOp.ALL_REDUCE.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.KN, false));
        assertEquals("iris_gemm_reduce_scatter_spare_warps_bf16_nk_traced",
                FusedOp.REDUCE_SCATTER.kernelName(FusedVariant.SPARE_WARPS, DType.BF16, GemmLayout.NK, true));
        assertEquals("iris_all_gather_gemm_f16_nk", FusedOp.ALL_GATHER.kernelName(FusedVariant.SPARE_WARPS, DType.F16, GemmLayout.NK, false));
        assertThrows(IllegalArgumentException.class,
                () -> FusedOp.ALL_GATHER.kernelName(FusedVariant.EPILOGUE, DType.BF16, GemmLayout.NK, false));
        assertThrows(IllegalArgumentException.class,
                () -> FusedOp.ALL_REDUCE.kernelName(FusedVariant.EPILOGUE, DType.F32, GemmLayout.NK, false));
    }

    @Test
    void autoRule() {
        assertEquals(FusedVariant.EPILOGUE, FusedVariant.AUTO.resolve(FusedOp.ALL_SCATTER, 8192, 4096, 8192, 2));
        assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.AUTO.resolve(FusedOp.ALL_REDUCE, 8192, 8192, 4096, 2));
        assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.AUTO.resolve(FusedOp.REDUCE_SCATTER, 8192, 8192, 4096, 2));
        assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.AUTO.resolve(FusedOp.ALL_GATHER, 8192, 4096, 8192, 2));
        for (FusedOp op : FusedOp.values()) {
            assertTrue(op.variants().contains(FusedVariant.choose(op, 1024, 1024, 1024, 2)), op.toString());
            assertEquals(FusedVariant.SPARE_WARPS, FusedVariant.SPARE_WARPS.resolve(op, 1, 1, 1, 2));
        }
        assertEquals("sequential", FusedVariant.EPILOGUE.kernelName(FusedOp.ALL_SCATTER));
        assertEquals("epilogue", FusedVariant.EPILOGUE.kernelName(FusedOp.REDUCE_SCATTER));
    }

    @Test
    void config() {
        FusedConfig c = FusedConfig.defaults();
        assertEquals(8, c.groupM());
        assertEquals(FusedVariant.AUTO, c.variant());
        assertEquals(false, c.tracing());
        assertEquals(0, c.maxBlocks());
        assertEquals(new FusedConfig(4, FusedVariant.EPILOGUE, true, 66),
                c.withGroupM(4).withVariant(FusedVariant.EPILOGUE).withTracing(true).withMaxBlocks(66));
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
        assertEquals(null, FusedSites.describe(7101));
    }

    @Test
    void describeForTheCreationMeeting() {
        assertEquals("GemmAllReduce M 300 N 264 K 520 groupM 8 AUTO untraced maxBlocks 0",
                FusedGemm.describe(FusedOp.ALL_REDUCE, 300, 264, 520, FusedConfig.defaults()));
    }
}

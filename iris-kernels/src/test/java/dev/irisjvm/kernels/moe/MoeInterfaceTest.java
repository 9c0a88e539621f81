package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.core.testing.ContextBytes;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_moe_args;
import dev.irisjvm.runtime.abi.iris_moe_gemm_args;
import dev.irisjvm.runtime.abi.iris_moe_ll_args;
import dev.irisjvm.runtime.abi.iris_moe_stats;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The MoE classes' side of iris/abi/moe.h (both modes): every kernel they look up is in the built
 * fatbins for every architecture, each call fills the fields its kernels read, and the workspace
 * layout and grids are what the kernels assume. Runs without a GPU (the generated struct is host memory).
 */
class MoeInterfaceTest {

    @Test
    void everyKernelTheMoeClassesLookUpIsCompiledForEveryArchitecture() {
        FatbinKernels.assertEveryModuleHolds(MoeDispatch.kernelNames());
        assertEquals(Set.of("moe_dispatch", "moe_combine"), MoeDispatch.kernelNames().keySet());
        FatbinKernels.assertEveryModuleHolds(MoeLowLatency.kernelNames());
        assertEquals(Set.of("moe_ll"), MoeLowLatency.kernelNames().keySet());
        FatbinKernels.assertEveryModuleHolds(MoeExpertGemm.kernelNames());
        assertEquals(Set.of("moe_expert_gemm", "moe_combine"), MoeExpertGemm.kernelNames().keySet());
    }

    @Test
    void theStructsHaveTheLayoutTheHeaderPins() {
        assertEquals(272, AbiLayout.size(iris_moe_args.class));
        assertEquals(264, AbiLayout.offset(iris_moe_args.class, "arrivals"));
        assertEquals(112, AbiLayout.offset(iris_moe_args.class, "workspace"));
        assertEquals(224, AbiLayout.offset(iris_moe_args.class, "tokens_n"));
        assertEquals(32, AbiLayout.size(iris_moe_stats.class));
        assertEquals(4, AbiLayout.offset(iris_moe_stats.class, "dropped_all"));
        assertEquals(16, AbiLayout.offset(iris_moe_stats.class, "first_bad_route"));
        assertEquals(232, AbiLayout.size(iris_moe_ll_args.class));
        assertEquals(112, AbiLayout.offset(iris_moe_ll_args.class, "workspace"));
        assertEquals(208, AbiLayout.offset(iris_moe_ll_args.class, "tokens_n"));
        assertEquals(448, AbiLayout.size(iris_moe_gemm_args.class));
        assertEquals(128, AbiLayout.offset(iris_moe_gemm_args.class, "b_map"));
        assertEquals(368, AbiLayout.offset(iris_moe_gemm_args.class, "counts"));
        assertEquals(392, AbiLayout.offset(iris_moe_gemm_args.class, "local_experts"));
        assertEquals(408, AbiLayout.offset(iris_moe_gemm_args.class, "arrivals"));
        assertEquals(416, AbiLayout.offset(iris_moe_gemm_args.class, "claims"));
    }

    @Test
    void expertGemmCallsFillTheFieldsTheirKernelsRead() {
        try (MoeExpertGemmArgs args = new MoeExpertGemmArgs(ContextBytes.of(2, 4), 0x40_0000L, 0x30_0000L, 0x60_0000L, 0x60_1000L, 3, 256, 384,
                264)) {
            iris_moe_gemm_args a = args.call(0x70_0000L);
            assertEquals(2, a.ctx().rank());
            assertEquals(4, a.ctx().world());
            assertEquals(0x40_0000L, a.counts().address());
            assertEquals(0x30_0000L, a.sources().address());
            assertEquals(0x60_0000L, a.arrivals().address());
            assertEquals(0x60_1000L, a.claims().address());
            assertEquals(0x70_0000L, a.out().address());
            assertEquals(3, a.local_experts());
            assertEquals(256, a._capacity());  // JavaCPP's name: Pointer has a capacity() of its own
            assertEquals(384, a.n());
            assertEquals(264, a.k());
            assertEquals(0x50_0000L, args.call(0x50_0000L).out().address());
        }
    }

    /**
     * The fields that both modes' dispatch fills alike, in either struct. Both tests below give the
     * same buffers, at the same addresses, and dispatch 77 tokens at 0x1000 (ids 0x2000, weights
     * 0x3000) of a layer of hidden 256, 8 experts and topK 2 on 4 ranks.
     */
    private record DispatchFields(int rank, int world, long workspace, long routes, long routeWeights, long recv, long counts,
                                  long staging, long tokens, long expertIds, long weights, int tokensN, int hidden, int experts, int topK) {
        /** The fields expected of rank {@code rank}, given where its layout puts the routes and their weights in the workspace. */
        static DispatchFields expected(int rank, long routesOffset, long routeWeightsOffset) {
            return new DispatchFields(rank, 4, 0x10_0000L, 0x10_0000L + routesOffset, 0x10_0000L + routeWeightsOffset, 0x20_0000L,
                    0x40_0000L, 0x50_0000L, 0x1000, 0x2000, 0x3000, 77, 256, 8, 2);
        }
    }

    @Test
    void lowLatencyCallsFillTheFieldsTheirKernelsRead() {
        MoeConfig c = MoeConfig.of(256, 8, 2, 100, 1);
        MoeLowLatencyLayout layout = MoeLowLatencyLayout.of(c, 4);
        MoeLowLatencyArgs.Buffers b = new MoeLowLatencyArgs.Buffers(0x10_0000L, 0x20_0000L, 0x30_0000L, 0x40_0000L, 0x50_0000L);
        try (MoeLowLatencyArgs args = new MoeLowLatencyArgs(ContextBytes.of(3, 4), c, layout, b)) {
            iris_moe_ll_args a = args.dispatch(0x1000, 0x2000, 0x3000, 77);
            assertEquals(DispatchFields.expected(3, layout.routes(), layout.routeWeights()), new DispatchFields(a.ctx().rank(),
                    a.ctx().world(), a.workspace().address(), a.routes().address(), a.route_weights().address(), a.recv().address(),
                    a.counts().address(), a.staging().address(), a.tokens().address(), a.expert_ids().address(), a.weights().address(),
                    a.tokens_n(), a.hidden(), a.experts(), a.top_k()));
            assertEquals(0x30_0000L, a.recv_routes().address());
            assertEquals(200, a.region_rows());
            assertEquals(0, a.reserved());

            a = args.combine(0x6000, 0x7000, 5);
            assertEquals(0x6000, a.expert_out().address());
            assertEquals(0x7000, a.out().address());
            assertEquals(5, a.tokens_n());
        }
    }

    @Test
    void callsFillTheFieldsTheirKernelsRead() {
        MoeConfig c = new MoeConfig(256, 8, 2, 100, 40, OverflowPolicy.DROP, dev.irisjvm.core.DType.BF16);
        MoeLayout layout = MoeLayout.of(c);
        MoeArgs.Buffers b = new MoeArgs.Buffers(0x10_0000L, 0x20_0000L, 0x30_0000L, 0x40_0000L, 0x40_1000L, 0x50_0000L);
        try (MoeArgs args = new MoeArgs(ContextBytes.of(1, 4), c, layout, b)) {
            iris_moe_args a = args.dispatch(0x1000, 0x2000, 0x3000, 77);
            assertEquals(DispatchFields.expected(1, layout.routes(), layout.routeWeights()), new DispatchFields(a.ctx().rank(),
                    a.ctx().world(), a.workspace().address(), a.routes().address(), a.route_weights().address(), a.recv().address(),
                    a.counts().address(), a.staging().address(), a.tokens().address(), a.expert_ids().address(), a.weights().address(),
                    a.tokens_n(), a.hidden(), a.experts(), a.top_k()));
            assertEquals(0x10_0000L + layout.blockCounts(), a.block_counts().address());
            assertEquals(0x30_0000L, a.sources().address());
            assertEquals(0x40_1000L, a.routed().address());
            assertEquals(0x10_0000L + layout.expertBase(), a.expert_base().address());
            assertEquals(0x10_0000L + layout.byExpert(), a.by_expert().address());
            assertEquals(0x10_0000L + layout.arrivals(), a.arrivals().address());
            assertEquals(40, a._capacity());  // JavaCPP's name: Pointer has a capacity() of its own
            assertEquals(KernelAbi.IRIS_MOE_POLICY_DROP, a.policy());

            a = args.combine(0x6000, 0x7000, 5);
            assertEquals(0x6000, a.expert_out().address());
            assertEquals(0x7000, a.out().address());
            assertEquals(5, a.tokens_n());
        }
    }

    @Test
    void theWorkspaceHoldsTheHeaderThenBlockCountsRoutesWeightsTheRoutesByExpertAndTheTileArrivals() {
        MoeConfig c = MoeConfig.of(64, 12, 3, 1001, 300);
        MoeLayout l = MoeLayout.of(c);
        assertEquals(KernelAbi.IRIS_MOE_WS_HEADER_BYTES, l.blockCounts());
        assertTrue(l.routes() >= l.blockCounts() + 256L * 12 * 4);
        assertTrue(l.routeWeights() >= l.routes() + 3003L * 4);
        assertTrue(l.expertBase() >= l.routeWeights() + 3003L * 4);
        assertTrue(l.byExpert() >= l.expertBase() + 12 * 4);
        assertTrue(l.arrivals() >= l.byExpert() + 3003L * 4);
        assertTrue(l.bytes() >= l.arrivals() + 12 * 3 * 8, "a uint64 per expert and tile of 128 rows (300 rows: 3 tiles)");
        for (long offset : new long[] {l.blockCounts(), l.routes(), l.routeWeights(), l.expertBase(), l.byExpert(), l.arrivals(),
                l.bytes()}) {
            assertEquals(0, offset % 256, "256-byte aligned: " + offset);
        }
        // The header: flags after the stats, the count matrix (IRIS_MAX_RANKS x MAX_EXPERTS int32) last.
        assertTrue(KernelAbi.IRIS_MOE_WS_STATS + 32 <= KernelAbi.IRIS_MOE_WS_ARRIVE);
        assertTrue(KernelAbi.IRIS_MOE_WS_TICKETS + 16 <= MoeLayout.CLAIMS && MoeLayout.CLAIMS + 4 <= KernelAbi.IRIS_MOE_WS_STATS);
        assertEquals(KernelAbi.IRIS_MOE_WS_HEADER_BYTES, KernelAbi.IRIS_MOE_WS_MATRIX + KernelAbi.IRIS_MAX_RANKS * MoeConfig.MAX_EXPERTS * 4);
    }

    @Test
    void gridsCoverTheRoutesAndRows() {
        assertEquals(1, MoeLayout.dispatchBlocks(0));
        assertEquals(1, MoeLayout.dispatchBlocks(512));
        assertEquals(2, MoeLayout.dispatchBlocks(513));
        assertEquals(256, MoeLayout.dispatchBlocks(256L * 512));
        assertEquals(256, MoeLayout.dispatchBlocks(1L << 40), "at most the per-block count rows");
        assertEquals(1, MoeLayout.rowBlocks(0, 528));
        assertEquals(1, MoeLayout.rowBlocks(16, 528));
        assertEquals(2, MoeLayout.rowBlocks(17, 528));
        assertEquals(528, MoeLayout.rowBlocks(1_000_000, 528));
        assertEquals(16, MoeLayout.ROW_GROUPS);
        MoeConfig c = MoeConfig.of(64, 16, 2, 1000, 300);  // 3 tiles per expert
        assertEquals(4 * 3 * 4, MoeLayout.copyBlocks(c, 4, 528), "one block per local expert, tile and owner");
        assertEquals(22, MoeLayout.copyBlocks(c, 4, MoeLayout.feedingCopyLimit(132)), "beside a fed GEMM: a sixth of the SMs");
        assertEquals(1, MoeLayout.feedingCopyLimit(5));
    }

    @Test
    void heapBytesCountsEveryBuffer() {
        MoeConfig c = MoeConfig.of(128, 8, 2, 100, 64);
        long l = 4;  // on 2 ranks
        long expected = MoeLayout.of(c).bytes() + l * 64 * 128 * 2 + l * 64 * 8 + 2 * 256 + 200 * 128 * 2;
        assertEquals(expected, MoeDispatch.heapBytes(c, 2));
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.testing.ContextBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.runtime.abi.iris_fused_args;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The fused kernels' side of iris/abi/fused.h, without a GPU (the generated struct is host memory):
 * an instance and each call fill the fields the kernels read, the struct keeps the layout TMA needs,
 * and the Java arithmetic that must agree with the kernels' (split-K's grid, the trace's kinds) does.
 */
class FusedInterfaceTest {

    @Test
    void anInstanceAndACallFillTheFieldsTheKernelsRead() {
        try (FusedArgs args = new FusedArgs(ContextBytes.of(1, 2), 0x7100_0000L, 0x7200_0000L, 0x7300_0000L, 1024, 1792, 8192, 8, 2)) {
            iris_fused_args a = args.call(0x7400_0000L, 0x7700_0000L, 0x7500_0000L, 0x7600_0000L, 1792, 42);
            assertEquals(1, a.ctx().rank());
            assertEquals(2, a.ctx().world());
            assertEquals(0x7100_0000L, a.partials().address());
            assertEquals(0x7200_0000L, a.flags().address());
            assertEquals(0x7300_0000L, a.trace().address());
            assertEquals(0x7400_0000L, a.a().address());
            assertEquals(0x7700_0000L, a.b().address());
            assertEquals(0x7500_0000L, a.c().address());
            assertEquals(0x7600_0000L, a.bias().address());
            assertEquals(1024, a.m());
            assertEquals(1792, a.n());
            assertEquals(8192, a.k());
            assertEquals(1792, a.ldc());
            assertEquals(8, a.group_m());
            assertEquals(2, a.slices());
            assertEquals(42, a.epoch());

            a = args.call(0, 0, 0x7500_0000L, 0, 1792, 43);
            assertNull(a.a(), "a Hopper kernel but all-gather's: no A pointer");
            assertNull(a.b(), "a Hopper kernel: no B pointer");
            assertNull(a.bias(), "no bias: a null pointer");
            assertEquals(43, a.epoch());
            assertEquals(0x7200_0000L, a.flags().address(), "the workspace stays");
        }
        try (FusedArgs args = new FusedArgs(ContextBytes.of(0, 1), 0, 0, 0, 128, 256, 64, 8, 1)) {
            iris_fused_args a = args.call(0, 0, 0x7500_0000L, 0, 256, 2);
            assertNull(a.partials());
            assertNull(a.flags());
            assertNull(a.trace(), "untraced: a null pointer");
            assertEquals(1, a.slices());
        }
    }

    @Test
    void theDescriptorsAre64ByteAlignedAndTheStructFitsTheParameterSpace() {
        assertEquals(0, AbiLayout.offset(iris_fused_args.class, "a_map") % 64);
        assertEquals(0, AbiLayout.offset(iris_fused_args.class, "b_map") % 64);
        assertTrue(AbiLayout.size(iris_fused_args.class) < 4096, "well under the 4 KiB of kernel parameters");
    }

    /**
     * Split-K over several rounds runs on an even grid, so that the two halves of a tile run side by
     * side, where the second waits least for the first (any grid is correct: split_k_exchange.cuh);
     * never on fewer than one block.
     */
    @Test
    void splitKLaunchesPairTheHalvesOfATile() {
        for (int world = 1; world <= 8; world++) {
            for (int limit = 1; limit <= 140; limit++) {
                for (long units = 2; units <= 600; units += 2) {
                    int blocks = FusedGemm.blocks(FusedOp.ALL_GATHER, world, limit, units, 2);
                    assertTrue(blocks >= 1 && blocks <= limit, "world " + world + ", limit " + limit + ", " + units + " units: " + blocks
                            + " blocks");
                    assertTrue(blocks % 2 == 0 || units <= blocks || blocks == 1,
                            "world " + world + ", limit " + limit + ", " + units + " units: " + blocks + " blocks");
                }
            }
        }
    }

    /** TileTrace reads a record's kind as an index into Kind: the header's codes are its order. */
    @Test
    void traceKindsAreTheRecordsCodes() {
        for (TileTrace.Kind kind : TileTrace.Kind.values()) {
            assertEquals(kind.ordinal(), kind.code(), kind.name());
        }
        assertEquals(4 * Long.BYTES, FusedWorkspace.TRACE_RECORD_BYTES, "TileTrace reads four u64 per record");
    }

    @Test
    void waitSitesAndLaunchChecksAreDistinctAndDescribed() {
        int[] sites = {FusedSites.PARTIAL_FLAG, FusedSites.GATHERED_ROWS, FusedSites.HANDOFF, FusedSites.GATHER_CLEAR,
                FusedSites.SPLIT_PARTIAL, FusedSites.SHARED_BYTES};
        Set<Integer> seen = new TreeSet<>();
        for (int site : sites) {
            assertTrue(seen.add(site), "site " + site + " twice");
            assertTrue(FusedSites.describe(site) != null, "site " + site + " is not described");
        }
    }
}

package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.kernels.MainloopMaps;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The GEMM's side of iris/abi/gemm.h: every kernel Gemm loads is in the built fatbin for every
 * architecture, a call fills the fields the kernel reads, and the struct keeps the layout TMA
 * needs. Runs without a GPU (the generated struct is host memory).
 */
class GemmInterfaceTest {

    @Test
    void everyKernelGemmLoadsIsCompiledForEveryArchitecture() {
        List<Set<String>> images = FatbinKernels.of(Gemm.MODULE);
        assertFalse(images.isEmpty(), Gemm.MODULE + " holds no cubin");
        int names = 0;
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (GemmALayout aLayout : GemmALayout.values()) {
                for (GemmLayout layout : GemmLayout.values()) {
                    for (DType out : new DType[] {in, DType.F32}) {
                        for (GemmTile tile : GemmTile.values()) {
                            if (tile.swapped() && aLayout == GemmALayout.KM) {
                                continue;
                            }
                            String name = GemmProblem.kernelName(tile, in, new GemmLayouts(aLayout, layout), out);
                            names++;
                            for (Set<String> image : images) {
                                assertTrue(image.contains(name), name + " is missing from a cubin of " + Gemm.MODULE);
                            }
                        }
                    }
                }
            }
        }
        assertEquals(272, names, "16 variants in 14 tiles, 8 (A stored M x K) in 6 swapped ones");
    }

    @Test
    void theMapsTakeEveryTilesBoxes() {
        // 128 x 192 pairs' 96-row box was refused on the GPU before this test (6534cc3).
        for (GemmTile tile : GemmTile.values()) {
            assertTrue(MainloopMaps.takesTileN(tile.bBoxRows()), () -> tile + ": an NK box of " + tile.bBoxRows() + " rows");
            assertTrue(MainloopMaps.takesTileM(tile.aBoxRows()), () -> tile + ": an MK box of " + tile.aBoxRows() + " rows");
        }
    }

    @Test
    void kernelNamesSayTheTileBothLayoutsAndKeepTheOldNamesForAnMkA() {
        assertEquals("iris_gemm_bf16_nk_bf16", GemmProblem.kernelName(GemmTile.WIDE, DType.BF16, GemmLayouts.MK_NK, DType.BF16));
        assertEquals("iris_gemm_f16_kn_f32", GemmProblem.kernelName(GemmTile.WIDE, DType.F16, GemmLayouts.MK_KN, DType.F32));
        assertEquals("iris_gemm_bf16_km_nk_f32", GemmProblem.kernelName(GemmTile.WIDE, DType.BF16, GemmLayouts.KM_NK, DType.F32));
        assertEquals("iris_gemm_f16_km_kn_f16", GemmProblem.kernelName(GemmTile.WIDE, DType.F16, GemmLayouts.KM_KN, DType.F16));
        assertEquals("iris_gemm_short_bf16_nk_bf16", GemmProblem.kernelName(GemmTile.SHORT, DType.BF16, GemmLayouts.MK_NK, DType.BF16));
        assertEquals("iris_gemm_short_f16_km_kn_f32", GemmProblem.kernelName(GemmTile.SHORT, DType.F16, GemmLayouts.KM_KN, DType.F32));
        assertEquals("iris_gemm_mid_f16_nk_f32", GemmProblem.kernelName(GemmTile.MID, DType.F16, GemmLayouts.MK_NK, DType.F32));
        assertEquals("iris_gemm_narrow_bf16_kn_bf16", GemmProblem.kernelName(GemmTile.NARROW, DType.BF16, GemmLayouts.MK_KN, DType.BF16));
        assertEquals("iris_gemm_pair_f16_km_nk_f32", GemmProblem.kernelName(GemmTile.PAIR, DType.F16, GemmLayouts.KM_NK, DType.F32));
        assertEquals("iris_gemm_short_thin_f16_km_nk_f16",
                GemmProblem.kernelName(GemmTile.SHORT_THIN, DType.F16, GemmLayouts.KM_NK, DType.F16));
        assertEquals("iris_gemm_swap8_bf16_kn_f32", GemmProblem.kernelName(GemmTile.SWAP_8, DType.BF16, GemmLayouts.MK_KN, DType.F32));
        assertEquals("iris_gemm_swap32_1x2_f16_nk_f16",
                GemmProblem.kernelName(GemmTile.SWAP_32_PAIR, DType.F16, GemmLayouts.MK_NK, DType.F16));
    }

    @Test
    void aCallFillsTheFieldsTheKernelReads() {
        try (GemmArgs args = new GemmArgs()) {
            iris_gemm_args a = args.operands(0x7000_0000L, 0x7100_0000L, 4096, 2048, 8192, 4096, 8, 0.5f, -2f);
            assertEquals(0x7000_0000L, a.c().address());
            assertEquals(0x7100_0000L, a.bias().address());
            assertEquals(4096, a.m());
            assertEquals(2048, a.n());
            assertEquals(8192, a.k());
            assertEquals(4096, a.ldc());
            assertEquals(8, a.group_m());
            assertEquals(0.5f, a.alpha());
            assertEquals(-2f, a.beta());

            a = args.operands(0x7200_0000L, 0, 1, 8, 8, 8, 1, 1f, 0f);
            assertNull(a.bias(), "no bias: a null pointer");
            assertEquals(0x7200_0000L, a.c().address());
            assertEquals(1f, a.alpha(), "refilled: the previous call's scaling does not stay");
            assertEquals(0f, a.beta());
        }
    }

    @Test
    void aSwappedCallFillsTheProductsShapeAndCsOwnStore() {
        // C (bf16, 32 x 4096, ld 4104) = A (32 x 1024) B^T, B 4096 x 1024: the product C^T is 4096 x 32.
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 32, 1024, 1024),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 4096, 1024, 1024), GemmLayout.NK, 0x4000_0000L,
                new DeviceMatrix(0x3000_0000L, DType.BF16, 32, 4096, 4104));
        try (GemmArgs args = new GemmArgs()) {
            iris_gemm_args a = args.operands(p, 8, new StreamKPlan(GemmTile.SWAP_32, 128, 64), 0x5000_0000L, 0x6000_0000L);
            assertEquals(4096, a.m(), "the product's rows: C's columns");
            assertEquals(32, a.n(), "the product's columns: C's rows");
            assertEquals(1024, a.k());
            assertEquals(4104, a.ldc(), "C's own leading dimension: the kernel stores C, transposing");
            assertEquals(0x3000_0000L, a.c().address());
            assertEquals(0x4000_0000L, a.bias().address());
            assertEquals(64, a.stream_k_tiles());
            a = args.operands(p, 8, false);
            assertEquals(32, a.m());
            assertEquals(4096, a.n());
        }
    }

    @Test
    void theDescriptorsAre64ByteAlignedAndTheStructFitsTheParameterSpace() {
        assertEquals(0, AbiLayout.offset(iris_gemm_args.class, "a_map") % 64);
        assertEquals(0, AbiLayout.offset(iris_gemm_args.class, "b_map") % 64);
        assertTrue(AbiLayout.size(iris_gemm_args.class) < 4096, "well under the 4 KiB of kernel parameters");
    }

    @Test
    void aProblemFillsItsScalingAndItsTransposedShape() {
        // dw (F32, 256 x 200, ld 264) += dy^T x with dy 72 x 256 (K x M) and x 72 x 200 (K x N).
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 72, 256, 256),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 72, 200, 200), GemmLayouts.KM_KN, 0,
                new DeviceMatrix(0x3000_0000L, DType.F32, 256, 200, 264), 1f, 1f);
        try (GemmArgs args = new GemmArgs()) {
            iris_gemm_args a = args.operands(p, 4);
            assertEquals(256, a.m());
            assertEquals(200, a.n());
            assertEquals(72, a.k());
            assertEquals(264, a.ldc());
            assertEquals(4, a.group_m());
            assertEquals(1f, a.alpha());
            assertEquals(1f, a.beta());
        }
        GemmProblem plain = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 256, 72, 72),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 72, 200, 200), GemmLayout.KN, 0,
                new DeviceMatrix(0x3000_0000L, DType.F32, 256, 200, 264));
        assertEquals(1f, plain.alpha(), "the old constructor is the plain product");
        assertEquals(0f, plain.beta());
        assertFalse(plain.readsC());
        assertTrue(p.readsC());
    }

    @Test
    void theLaunchGivesWhatTheHeaderSays() {
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 1024, 512, 512),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 2048, 512, 512), GemmLayout.NK, 0,
                new DeviceMatrix(0x3000_0000L, DType.BF16, 1024, 2048, 2048));
        var shape = Gemm.launchShape(p, 132);
        assertEquals(Gemm.THREADS, shape.blockX());
        assertEquals(Gemm.SHARED_BYTES, shape.sharedBytes());
        assertEquals(128, shape.gridX(), "8 x 8 tiles of 128 x 256 would leave SMs idle and 8 k-blocks are too short a K to share: "
                + "8 x 16 of 128 x 128, one block per tile");
        assertEquals(GemmTile.WIDE, GemmTile.of(p.m()));
    }

    @Test
    void problemsOfAtMost64RowsLaunchTheShortTiles() {
        for (int m : new int[] {1, 33, Gemm.SHORT_TILE_M, Gemm.SHORT_TILE_M + 1}) {
            GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, m, 512, 512),
                    new DeviceMatrix(0x2000_0000L, DType.BF16, 2048, 512, 512), GemmLayout.NK, 0,
                    new DeviceMatrix(0x3000_0000L, DType.BF16, m, 2048, 2048));
            boolean expected = m <= Gemm.SHORT_TILE_M;
            assertEquals(expected ? GemmTile.SHORT : GemmTile.WIDE, GemmTile.of(p.m()), "M = " + m);
            assertEquals(expected ? 2048 / Gemm.SHORT_TILE_N : 2048 / Gemm.TILE_N, p.tiles(), "M = " + m);
            assertEquals(expected ? "iris_gemm_short_bf16_nk_bf16" : "iris_gemm_bf16_nk_bf16", p.kernelName(), "M = " + m);
            GemmTile planned = Gemm.plan(p.m(), p.n(), p.k(), 132, true).tile();
            assertEquals(planned.threads(), Gemm.launchShape(p, 132).blockX(), "M = " + m);
            if (expected) {
                assertEquals(Gemm.SHORT_TILE_M, planned.rows(), "M = " + m);
            }
            assertArrayEquals(expected ? new GemmTile[] {GemmTile.SHORT, GemmTile.SHORT_THIN}
                            : new GemmTile[] {GemmTile.WIDE, GemmTile.MID, GemmTile.NARROW, GemmTile.SHORT, GemmTile.SHORT_THIN},
                    GemmTile.choices(m), "M = " + m);
            assertEquals(Gemm.SHARED_BYTES, Gemm.launchShape(p, 132).sharedBytes(), "M = " + m);
        }
        assertEquals(Gemm.SHORT_THREADS, 128 * (1 + Gemm.SHORT_TILE_M / 64), "a producer and one consumer of 64 rows");
    }
}

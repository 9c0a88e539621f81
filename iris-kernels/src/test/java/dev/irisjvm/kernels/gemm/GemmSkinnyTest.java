package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.runtime.abi.iris_gemm_skinny_args;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The skinny kernels' host side without a GPU: they are in the portable fatbin for every
 * architecture, a call fills the struct the kernel reads (iris/abi/gemm_portable.h), and the split
 * of K gives every SM its blocks without an empty slice or more partials than the workspace holds.
 */
class GemmSkinnyTest {
    /** An H200's SMs, the blocks they run at once (three each), and the workspace a Gemm allocates for them. */
    private static final int SMS = 132;
    private static final int WAVE = 3 * SMS;
    private static final long PARTIAL_FLOATS = StreamKPlan.partialBytes(SMS) / Float.BYTES;
    private static final long COUNTERS = StreamKPlan.counterBytes(StreamKPlan.maxSharedTiles(SMS)) / Integer.BYTES;

    @Test
    void everySkinnyKernelIsCompiledForEveryArchitecture() {
        List<Set<String>> images = FatbinKernels.of(PortableGemm.MODULE);
        assertFalse(images.isEmpty(), PortableGemm.MODULE + " holds no cubin");
        int names = 0;
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (GemmLayout layout : GemmLayout.values()) {
                for (DType out : new DType[] {in, DType.F32}) {
                    String name = SkinnyGemm.kernelName(in, layout, out);
                    names++;
                    for (Set<String> image : images) {
                        assertTrue(image.contains(name), name + " is missing from a cubin of " + PortableGemm.MODULE);
                    }
                }
            }
        }
        assertEquals(8, names);
        assertEquals("iris_gemm_skinny_bf16_kn_f32", SkinnyGemm.kernelName(DType.BF16, GemmLayout.KN, DType.F32));
    }

    @Test
    void takesAtMostThirtyTwoRowsWithAStoredMByK() {
        assertTrue(SkinnyGemm.takes(problem(32, 4096, 4096, GemmALayout.MK)));
        assertFalse(SkinnyGemm.takes(problem(33, 4096, 4096, GemmALayout.MK)));
        assertFalse(SkinnyGemm.takes(problem(8, 4096, 4096, GemmALayout.KM)), "a K x M A stays on the tiled kernels");
    }

    @Test
    void aCallFillsEveryFieldTheKernelReads() {
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 3, 200, 208), GemmALayout.MK,
                new DeviceMatrix(0x2000_0000L, DType.BF16, 200, 264, 272), GemmLayout.KN, 0x4000_0000L,
                new DeviceMatrix(0x3000_0210L, DType.F32, 3, 264, 528), 0.5f, -2f);
        SkinnyGemm.Split split = new SkinnyGemm.Split(3, 2, 2);
        try (GemmSkinnyArgs args = new GemmSkinnyArgs()) {
            iris_gemm_skinny_args a = args.of(p, split, 0x5000_0000L, 0x6000_0000L);
            assertEquals(0x1000_0000L, a.a().address());
            assertEquals(0x2000_0000L, a.b().address());
            assertEquals(0x3000_0210L, a.c().address());
            assertEquals(0x4000_0000L, a.bias().address());
            assertEquals(0x5000_0000L, a.partials().address());
            assertEquals(0x6000_0000L, a.counters().address());
            assertEquals(208, a.lda());
            assertEquals(272, a.ldb());
            assertEquals(528, a.ldc());
            assertEquals(3, a.m());
            assertEquals(264, a.n());
            assertEquals(200, a.k());
            assertEquals(2, a.slices());
            assertEquals(2, a.k_blocks_per_slice());
            assertEquals(0.5f, a.alpha());
            assertEquals(-2f, a.beta());

            a = args.of(problem(1, 8, 8, GemmALayout.MK), new SkinnyGemm.Split(1, 1, 1), 0, 0);
            assertNull(a.bias(), "no bias: a null pointer");
            assertNull(a.partials(), "one slice: no partials");
            assertEquals(1f, a.alpha(), "refilled: the previous call's scaling does not stay");
            assertEquals(0f, a.beta());
        }
    }

    @Test
    void theStructHasTheLayoutTheHeaderPins() {
        assertEquals(104, AbiLayout.size(iris_gemm_skinny_args.class));
        assertEquals(48, AbiLayout.offset(iris_gemm_skinny_args.class, "lda"));
        assertEquals(72, AbiLayout.offset(iris_gemm_skinny_args.class, "m"));
        assertEquals(84, AbiLayout.offset(iris_gemm_skinny_args.class, "slices"));
        assertEquals(96, AbiLayout.offset(iris_gemm_skinny_args.class, "beta"));
    }

    /** (M, N, K) -> tiles, slices, k-blocks per slice on 132 SMs of 3 blocks each. */
    @ParameterizedTest
    @CsvSource({
            // 48 tiles: 8 slices fill one wave of 3 blocks per SM (396); 64 k-blocks make them 8 of 8.
            "1, 6144, 4096, 48, 8, 8",
            // 32 tiles of 8 k-blocks: at most 4 slices of 2.
            "1, 4096, 512, 32, 4, 2",
            // 32 tiles of 224 k-blocks: 12 slices of 19 (the last of 15), 384 blocks.
            "1, 4096, 14336, 32, 12, 19",
            // 6 tiles want 66 slices; 64 k-blocks allow 32 of 2.
            "1, 768, 4096, 6, 32, 2",
            // 8 and 16 rows: the last block adds at most 64 rows of partials, 8 and 4 slices.
            "8, 768, 4096, 6, 8, 8",
            "16, 1536, 4096, 12, 4, 16",
            // 112 tiles: 3 slices, 336 blocks, not 4 and a second wave.
            "1, 14336, 4096, 112, 3, 22",
            // Enough tiles: whole.
            "16, 28672, 8192, 224, 1, 128",
            "1, 128256, 4096, 1002, 1, 64",
            // One k-block: one slice.
            "1, 4096, 8, 32, 1, 1",
            // Ragged: 1000 / 128 -> 8 tiles, 8200 / 64 -> 129 k-blocks, 49 wanted -> 3 k-blocks each, 43 slices.
            "1, 1000, 8200, 8, 43, 3"})
    void theSplitFillsOneWaveWithEvenNonEmptySlices(int m, int n, int k, int tiles, int slices, int perSlice) {
        SkinnyGemm.Split split = SkinnyGemm.split(m, n, k, WAVE, PARTIAL_FLOATS, COUNTERS);
        assertEquals(new SkinnyGemm.Split(tiles, slices, perSlice), split, m + " x " + n + " x " + k);
        int kBlocks = (int) GemmChecks.ceilDiv(k, SkinnyGemm.TILE_K);
        assertTrue((long) (split.slices() - 1) * split.kBlocksPerSlice() < kBlocks, "the last slice is not empty");
        assertTrue((long) split.slices() * split.kBlocksPerSlice() >= kBlocks, "the slices cover K");
        assertTrue(split.slices() == 1 || split.grid() <= WAVE, "one wave");
        assertTrue(split.slices() * m <= SkinnyGemm.MAX_SUMMED_ROWS || split.slices() == 1, "at most 64 rows of partials");
    }

    @Test
    void rowsPastSixteenRunInBandsThatShareTheWave() {
        // 2 bands x 32 tiles: 6 slices would fill the wave, 4 keep a band's partials at 64 rows.
        assertEquals(new SkinnyGemm.Split(2, 32, 4, 4), SkinnyGemm.split(32, 4096, 1024, WAVE, PARTIAL_FLOATS, COUNTERS));
        assertEquals(new SkinnyGemm.Split(2, 32, 4, 4), SkinnyGemm.split(17, 4096, 1024, WAVE, PARTIAL_FLOATS, COUNTERS), "17 rows: a band of 1");
        // 2 bands x 128 tiles: 256 blocks, one slice.
        assertEquals(new SkinnyGemm.Split(2, 128, 1, 32), SkinnyGemm.split(32, 16384, 2048, WAVE, PARTIAL_FLOATS, COUNTERS));
        assertEquals(2L * 32 * 4 * 16 * 128, SkinnyGemm.partialFloats(2, 32, 4));
        assertFalse(SkinnyGemm.fits(new SkinnyGemm.Split(2, 32, 4, 4), PARTIAL_FLOATS, 63), "a counter per band and tile");
        assertTrue(SkinnyGemm.fits(new SkinnyGemm.Split(2, 32, 4, 4), PARTIAL_FLOATS, 64));
    }

    @Test
    void oneBlockPerSmSplitsLess() {
        assertEquals(new SkinnyGemm.Split(32, 4, 56), SkinnyGemm.split(1, 4096, 14336, SMS, PARTIAL_FLOATS, COUNTERS), "sm_86: 132 blocks");
    }

    @Test
    void withoutAWorkspaceOrBeyondItEveryTileRunsWhole() {
        assertEquals(1, SkinnyGemm.split(1, 4096, 4096, WAVE, 0, 0).slices(), "no workspace");
        assertEquals(1, SkinnyGemm.split(1, 4096, 4096, WAVE, PARTIAL_FLOATS, 16).slices(), "32 tiles, 16 counters");
        long room = 3L * 32 * SkinnyGemm.TILE_M * SkinnyGemm.TILE_N;
        assertEquals(3, SkinnyGemm.split(1, 4096, 4096, WAVE, room, COUNTERS).slices(), "partials for 3 slices of 32 tiles");
    }

    @Test
    void oneBlockPerTileAndSlice() {
        LaunchShape shape = SkinnyGemm.launchShape(new SkinnyGemm.Split(32, 4, 2));
        assertEquals(128, shape.gridX());
        assertEquals(128, shape.blockX());
        assertEquals(73728, shape.sharedBytes());
        assertEquals("skinny 16 x 128 tiles, 32 tiles in 4 slices of K on 128 blocks", new SkinnyGemm.Split(32, 4, 2).describe());
        assertEquals("skinny 16 x 128 tiles, 1002 tiles whole on 1002 blocks", new SkinnyGemm.Split(1002, 1, 64).describe());
        assertEquals("skinny 16 x 128 tiles in 2 bands of rows, 32 tiles in 4 slices of K on 256 blocks",
                new SkinnyGemm.Split(2, 32, 4, 4).describe());
        assertEquals(256, SkinnyGemm.launchShape(new SkinnyGemm.Split(2, 32, 4, 4)).gridX());
    }

    private static GemmProblem problem(int m, int n, int k, GemmALayout aLayout) {
        DeviceMatrix a = aLayout == GemmALayout.MK ? DeviceMatrix.contiguous(0x1000_0000L, DType.BF16, m, k)
                : DeviceMatrix.contiguous(0x1000_0000L, DType.BF16, k, m);
        return new GemmProblem(a, aLayout, DeviceMatrix.contiguous(0x2000_0000L, DType.BF16, n, k), GemmLayout.NK, 0,
                DeviceMatrix.contiguous(0x3000_0000L, DType.BF16, m, n), 1f, 0f);
    }
}

package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.kernels.HostPrograms;
import dev.irisjvm.runtime.abi.iris_gemm_skinny_args;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The skinny kernels' host side without a GPU: they are in the portable fatbin for every
 * architecture, a call fills the struct the kernel reads (iris/abi/gemm_portable.h), and the split
 * of K gives every SM its blocks without an empty slice or more partials than the workspace holds,
 * as the kernel's own block arithmetic (iris/gemm/sm80/skinny.cuh, run on the CPU by
 * src/test/native/gemm_skinny_split.cu) computes them.
 */
class GemmSkinnyTest {
    /** An H200's SMs, the most blocks a split aims at on them (two each), and the workspace a Gemm allocates for them. */
    private static final int SMS = 132;
    private static final int MOST_BLOCKS = 2 * SMS;
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

    /** (M, N, K) -> tiles, slices, k-blocks per slice on 132 SMs, at most two blocks each. */
    @ParameterizedTest
    @CsvSource({
            // 48 tiles: 5 slices make at most 264 blocks; 64 k-blocks make them 5 of 13 (the last 12).
            "1, 6144, 4096, 48, 5, 13",
            // 32 tiles of 8 k-blocks: whole, as no slice may have fewer than 8.
            "1, 4096, 512, 32, 1, 8",
            // 32 tiles of 224 k-blocks: 8 slices of 28, 256 blocks.
            "1, 4096, 14336, 32, 8, 28",
            // 6 tiles want 44 slices; 64 k-blocks allow 8 of 8.
            "1, 768, 4096, 6, 8, 8",
            "8, 768, 4096, 6, 8, 8",
            "16, 1536, 4096, 12, 8, 8",
            // 18 tiles: 14 slices, 224 rows of partials.
            "16, 2304, 16384, 18, 14, 19",
            // One tile of 16 rows: at most 256 rows of partials, 16 slices.
            "16, 128, 65536, 1, 16, 64",
            // 112 tiles: 2 slices, 224 blocks.
            "1, 14336, 4096, 112, 2, 32",
            // Enough tiles: whole.
            "16, 28672, 8192, 224, 1, 128",
            "1, 128256, 4096, 1002, 1, 64",
            // One k-block: one slice.
            "1, 4096, 8, 32, 1, 1",
            // Ragged: 1000 / 128 -> 8 tiles, 8200 / 64 -> 129 k-blocks, 16 slices wanted -> 9 k-blocks each, 15 slices.
            "1, 1000, 8200, 8, 15, 9"})
    void theSplitKeepsTwoBlocksPerSmWithEvenNonEmptySlices(int m, int n, int k, int tiles, int slices, int perSlice) {
        SkinnyGemm.Split split = SkinnyGemm.split(m, n, k, MOST_BLOCKS, PARTIAL_FLOATS, COUNTERS);
        assertEquals(new SkinnyGemm.Split(tiles, slices, perSlice), split, m + " x " + n + " x " + k);
        int kBlocks = (int) GemmChecks.ceilDiv(k, SkinnyGemm.TILE_K);
        assertTrue((long) (split.slices() - 1) * split.kBlocksPerSlice() < kBlocks, "the last slice is not empty");
        assertTrue((long) split.slices() * split.kBlocksPerSlice() >= kBlocks, "the slices cover K");
        assertTrue(split.slices() == 1 || split.grid() <= MOST_BLOCKS, "at most two blocks per SM");
        assertTrue(split.slices() == 1 || split.kBlocksPerSlice() >= SkinnyGemm.MIN_SLICE_K_BLOCKS, "at least 8 k-blocks a slice");
        assertTrue(split.slices() * m <= SkinnyGemm.MAX_SUMMED_ROWS || split.slices() == 1, "at most 256 rows of partials");
    }

    @Test
    void rowsPastSixteenRunInBandsThatShareTheBlocks() {
        // 2 bands x 32 tiles: 4 slices would make 256 blocks, 16 k-blocks allow 2 of 8.
        assertEquals(new SkinnyGemm.Split(2, 32, 2, 8), SkinnyGemm.split(32, 4096, 1024, MOST_BLOCKS, PARTIAL_FLOATS, COUNTERS));
        assertEquals(new SkinnyGemm.Split(2, 32, 2, 8), SkinnyGemm.split(17, 4096, 1024, MOST_BLOCKS, PARTIAL_FLOATS, COUNTERS),
                "17 rows: a band of 1");
        // 2 bands x 128 tiles: 256 blocks, one slice.
        assertEquals(new SkinnyGemm.Split(2, 128, 1, 32), SkinnyGemm.split(32, 16384, 2048, MOST_BLOCKS, PARTIAL_FLOATS, COUNTERS));
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
        assertEquals(1, SkinnyGemm.split(1, 4096, 4096, MOST_BLOCKS, 0, 0).slices(), "no workspace");
        assertEquals(1, SkinnyGemm.split(1, 4096, 4096, MOST_BLOCKS, PARTIAL_FLOATS, 16).slices(), "32 tiles, 16 counters");
        long room = 3L * 32 * SkinnyGemm.TILE_M * SkinnyGemm.TILE_N;
        assertEquals(3, SkinnyGemm.split(1, 4096, 4096, MOST_BLOCKS, room, COUNTERS).slices(), "partials for 3 slices of 32 tiles");
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

    @Test
    void theKernelsOwnBlocksRunEveryKBlockOnceWithinTheWorkspace() throws Exception {
        // src/test/native/gemm_skinny_split.cu runs skinny.cuh's block arithmetic for every block of
        // each split, held to the workspace it was made for: as Gemm chooses it (no workspace, a
        // Gemm's, a small one) and as Gemm.launchSkinny forces it within a Gemm's.
        long[][] workspaces = {{0, 0}, {PARTIAL_FLOATS, COUNTERS}, {3L * 32 * SkinnyGemm.TILE_M * SkinnyGemm.TILE_N, 64}};
        List<String> lines = new ArrayList<>();
        for (int m : new int[] {1, 8, 15, 16, 17, 32}) {
            for (int n : new int[] {8, 128, 1000, 4096, 6144, 28672}) {
                for (int k : new int[] {8, 64, 1000, 4096, 8200, 16384}) {
                    for (long[] w : workspaces) {
                        lines.add(launch(m, n, k, SkinnyGemm.split(m, n, k, MOST_BLOCKS, w[0], w[1]), w[0], w[1]));
                    }
                    for (int slices : new int[] {2, 7, 64}) {
                        SkinnyGemm.Split forced = SkinnyGemm.evenly(m, n, k, slices);
                        if (SkinnyGemm.fits(forced, PARTIAL_FLOATS, COUNTERS)) {
                            lines.add(launch(m, n, k, forced, PARTIAL_FLOATS, COUNTERS));
                        }
                    }
                }
            }
        }
        HostPrograms.okAnswers("gemm_skinny_split", lines, "");
    }

    /** gemm_skinny_split's line for one launch of {@code split} on a workspace of that many partial floats and counters. */
    private static String launch(int m, int n, int k, SkinnyGemm.Split split, long partialFloats, long counters) {
        return "split " + m + " " + n + " " + k + " " + split.slices() + " " + split.kBlocksPerSlice() + " " + split.grid() + " " + partialFloats
                + " " + counters;
    }

    private static GemmProblem problem(int m, int n, int k, GemmALayout aLayout) {
        DeviceMatrix a = aLayout == GemmALayout.MK ? DeviceMatrix.contiguous(0x1000_0000L, DType.BF16, m, k)
                : DeviceMatrix.contiguous(0x1000_0000L, DType.BF16, k, m);
        return new GemmProblem(a, aLayout, DeviceMatrix.contiguous(0x2000_0000L, DType.BF16, n, k), GemmLayout.NK, 0,
                DeviceMatrix.contiguous(0x3000_0000L, DType.BF16, m, n), 1f, 0f);
    }
}

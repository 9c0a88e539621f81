package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.kernels.CheckRank;
import dev.irisjvm.kernels.FatbinKernels;
import dev.irisjvm.runtime.abi.iris_gemm_portable_args;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The portable mainloop's host side without a GPU: its kernels, both tiles', are in the fatbin for
 * every architecture since sm_80, a call fills the struct the kernel reads (iris/abi/gemm_portable.h),
 * the wide tile is chosen where it makes a full wave, the launch covers every tile, and the choice
 * between the mainloops follows the options, then {@code IRIS_GEMM_MAINLOOP}, then the GPU.
 */
class GemmPortableTest {
    private static final DeviceProperties H200 = gpu("NVIDIA H200", 9, 0, 232448);
    private static final DeviceProperties A100 = gpu("NVIDIA A100-SXM4-80GB", 8, 0, 166912);
    private static final DeviceProperties L40S = gpu("NVIDIA L40S", 8, 9, 101376);
    private static final DeviceProperties B200 = gpu("NVIDIA B200", 10, 0, 232448);

    @RegisterExtension
    static final CheckRank RANK = new CheckRank(2);
    private static final GemmLayouts[] ALL_LAYOUTS = {GemmLayouts.MK_NK, GemmLayouts.MK_KN, GemmLayouts.KM_NK, GemmLayouts.KM_KN};

    private static DeviceProperties gpu(String name, int major, int minor, long smem) {
        return new DeviceProperties(0, name, major, minor, 132, 32, 1024, 0, 0x1b, 0, 80L << 30, 40L << 20, smem);
    }

    // ---- the module --------------------------------------------------------------------------------

    @Test
    void everyKernelIsCompiledForEveryArchitectureSinceAmpere() {
        List<Set<String>> images = FatbinKernels.of(PortableGemm.MODULE);
        assertEquals(6, images.size(), "machine code for sm_80, sm_86, sm_89, sm_90a, sm_100 and sm_120 (IRIS_CUDA_PORTABLE_GENCODE)");
        for (PortableGemm.Tile tile : PortableGemm.Tile.values()) {
            for (DType in : new DType[] {DType.BF16, DType.F16}) {
                for (GemmLayouts layouts : ALL_LAYOUTS) {
                    for (DType out : new DType[] {in, DType.F32}) {
                        String name = PortableGemm.kernelName(tile, in, layouts, out);
                        for (Set<String> image : images) {
                            assertTrue(image.contains(name), name + " is missing from a cubin of " + PortableGemm.MODULE);
                        }
                    }
                }
            }
        }
        assertEquals("iris_gemm_portable_f16_kn_f32", PortableGemm.kernelName(PortableGemm.Tile.SQUARE, DType.F16, GemmLayouts.MK_KN, DType.F32));
        assertEquals("iris_gemm_portable_wide_bf16_km_nk_bf16",
                PortableGemm.kernelName(PortableGemm.Tile.WIDE, DType.BF16, GemmLayouts.KM_NK, DType.BF16));
    }

    // ---- the struct and the launch -----------------------------------------------------------------

    @Test
    void aCallFillsEveryFieldTheKernelReads() {
        // 333 x 264 x 200 with padded rows: lda 208, a K x N B with ldb 272, C a column block of 528.
        GemmProblem p = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 333, 200, 208),
                new DeviceMatrix(0x2000_0000L, DType.BF16, 200, 264, 272), GemmLayout.KN, 0x4000_0000L,
                new DeviceMatrix(0x3000_0210L, DType.F32, 333, 264, 528));
        try (GemmPortableArgs args = new GemmPortableArgs()) {
            iris_gemm_portable_args a = args.of(p, 5);
            assertEquals(0x1000_0000L, a.a().address());
            assertEquals(0x2000_0000L, a.b().address());
            assertEquals(0x3000_0210L, a.c().address());
            assertEquals(0x4000_0000L, a.bias().address());
            assertEquals(208, a.lda());
            assertEquals(272, a.ldb());
            assertEquals(528, a.ldc());
            assertEquals(333, a.m());
            assertEquals(264, a.n());
            assertEquals(200, a.k());
            assertEquals(5, a.group_m());
            assertEquals(1f, a.alpha(), "the plain product: alpha 1");
            assertEquals(0f, a.beta(), "and beta 0");

            GemmProblem noBias = new GemmProblem(DeviceMatrix.contiguous(0x1000_0000L, DType.F16, 1, 8),
                    DeviceMatrix.contiguous(0x2000_0000L, DType.F16, 8, 8), GemmLayout.NK, 0,
                    DeviceMatrix.contiguous(0x3000_0000L, DType.F16, 1, 8));
            a = args.of(noBias, 8);
            assertNull(a.bias(), "no bias: a null pointer");
            assertEquals(8, a.lda());
            assertEquals(1, a.m());

            // dW += dY^T X: A (dY) stored K x M = 96 x 40 with lda 48.
            GemmProblem scaled = new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, 96, 40, 48),
                    DeviceMatrix.contiguous(0x2000_0000L, DType.BF16, 96, 16), GemmLayouts.KM_KN, 0,
                    DeviceMatrix.contiguous(0x3000_0000L, DType.F32, 40, 16), 0.5f, -1.5f);
            a = args.of(scaled, 8);
            assertEquals(48, a.lda());
            assertEquals(40, a.m());
            assertEquals(96, a.k());
            assertEquals(0.5f, a.alpha());
            assertEquals(-1.5f, a.beta());
        }
    }

    @Test
    void theStructHasTheLayoutTheHeaderPins() {
        assertEquals(80, AbiLayout.size(iris_gemm_portable_args.class));
        assertEquals(32, AbiLayout.offset(iris_gemm_portable_args.class, "lda"));
        assertEquals(56, AbiLayout.offset(iris_gemm_portable_args.class, "m"));
        assertEquals(68, AbiLayout.offset(iris_gemm_portable_args.class, "group_m"));
        assertEquals(72, AbiLayout.offset(iris_gemm_portable_args.class, "alpha"));
        assertEquals(76, AbiLayout.offset(iris_gemm_portable_args.class, "beta"));
    }

    @Test
    void oneBlockPerTileOfEitherShape() {
        GemmProblem p = new GemmProblem(DeviceMatrix.contiguous(0x1000_0000L, DType.BF16, 1000, 64),
                DeviceMatrix.contiguous(0x2000_0000L, DType.BF16, 1032, 64), GemmLayout.NK, 0,
                DeviceMatrix.contiguous(0x3000_0000L, DType.BF16, 1000, 1032));
        LaunchShape square = PortableGemm.launchShape(p, PortableGemm.Tile.SQUARE);
        assertEquals(8 * 9, square.gridX(), "ceil(1000 / 128) x ceil(1032 / 128) tiles");
        assertEquals(128, square.blockX(), "four warps");
        assertEquals(65536, square.sharedBytes(), "4 stages of 128 x 32 A and 32 x 128 B");
        LaunchShape wide = PortableGemm.launchShape(p, PortableGemm.Tile.WIDE);
        assertEquals(4 * 9, wide.gridX(), "ceil(1000 / 256) x ceil(1032 / 128) tiles");
        assertEquals(256, wide.blockX(), "eight warps");
        assertEquals(98304, wide.sharedBytes(), "4 stages of 256 x 32 A and 32 x 128 B");
        assertEquals(128, PortableGemm.TILE_N);
        assertEquals("256 x 128", PortableGemm.Tile.WIDE.shape());
        assertEquals("128 x 128", PortableGemm.Tile.SQUARE.shape());
    }

    @Test
    void theWideTileTakesProblemsWhoseWideTilesMakeAFullWave() {
        // 132 SMs (H200): wide where ceil(M / 256) x ceil(N / 128) >= 132.
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(8192, 8192, 132), "32 x 64 = 2048 wide tiles");
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(4096, 4096, 132), "16 x 32 = 512");
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(1024, 8192, 132), "4 x 64 = 256");
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(8192, 1024, 132), "32 x 8 = 256");
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(2817, 1408, 132), "12 x 11 = 132: exactly one wave");
        assertSame(PortableGemm.Tile.SQUARE, PortableGemm.tile(2816, 1408, 132), "11 x 11 = 121");
        assertSame(PortableGemm.Tile.SQUARE, PortableGemm.tile(2048, 2048, 132), "8 x 16 = 128: four SMs short of a wave");
        assertSame(PortableGemm.Tile.SQUARE, PortableGemm.tile(1000, 1064, 132), "4 x 9 = 36");
        assertSame(PortableGemm.Tile.SQUARE, PortableGemm.tile(1, 8, 132));
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(2048, 2048, 128), "the wave is the GPU's: 128 SMs");
        assertSame(PortableGemm.Tile.WIDE, PortableGemm.tile(1, 8, 1), "one SM: any tile is a wave");
    }

    // ---- which mainloop ----------------------------------------------------------------------------

    @Test
    void theEnvironmentVariableTakesAutoHopperOrPortableInAnyCase() {
        assertSame(GemmMainloop.AUTO, GemmMainloop.fromEnvironment(Map.of()));
        assertSame(GemmMainloop.AUTO, GemmMainloop.fromEnvironment(Map.of("IRIS_GEMM_MAINLOOP", "  ")));
        assertSame(GemmMainloop.AUTO, GemmMainloop.fromEnvironment(Map.of("IRIS_GEMM_MAINLOOP", "Auto")));
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.fromEnvironment(Map.of("IRIS_GEMM_MAINLOOP", "portable")));
        assertSame(GemmMainloop.HOPPER, GemmMainloop.fromEnvironment(Map.of("IRIS_GEMM_MAINLOOP", " HOPPER ")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GemmMainloop.fromEnvironment(Map.of("IRIS_GEMM_MAINLOOP", "sm80")));
        assertEquals("rank 2: gemm: IRIS_GEMM_MAINLOOP must be one of auto, hopper, portable (in any case), got 'sm80'",
                e.getMessage());
    }

    @Test
    void optionsThenEnvironmentThenTheGpuChoose() {
        GemmMainloop auto = GemmMainloop.AUTO;
        assertSame(GemmMainloop.HOPPER, GemmMainloop.choose(auto, auto, H200));
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(auto, auto, A100));
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(auto, auto, L40S));
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(auto, auto, B200), "sm_90a code does not run on 10.0");
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(auto, auto, gpu("odd 9.0", 9, 0, 200_000)),
                "too little shared memory for the Hopper kernel");
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(auto, GemmMainloop.PORTABLE, H200), "the environment forces it");
        assertSame(GemmMainloop.HOPPER, GemmMainloop.choose(auto, GemmMainloop.HOPPER, A100),
                "the environment forces it; loading then fails with the Hopper requirement");
        assertSame(GemmMainloop.HOPPER, GemmMainloop.choose(GemmMainloop.HOPPER, GemmMainloop.PORTABLE, H200), "options win");
        assertSame(GemmMainloop.PORTABLE, GemmMainloop.choose(GemmMainloop.PORTABLE, GemmMainloop.HOPPER, H200), "options win");
    }

    @Test
    void optionsCarryTheChoice() {
        assertSame(GemmMainloop.AUTO, Gemm.Options.defaults().mainloop());
        Gemm.Options o = Gemm.Options.defaults().withMainloop(GemmMainloop.PORTABLE).withGroupM(3);
        assertSame(GemmMainloop.PORTABLE, o.mainloop());
        assertEquals(3, o.groupM());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Gemm.Options.defaults().withMainloop(null));
        assertTrue(e.getMessage().startsWith("rank 2: gemm: mainloop must not be null"), e.getMessage());
        assertEquals("portable", GemmMainloop.PORTABLE.toString(), "spelled as IRIS_GEMM_MAINLOOP takes it");
    }

    @Test
    void thePortableKernelsNeedCompute80AndTheWideOnesSharedMemory() {
        PortableGemm.device(Platform.CUDA, A100);
        PortableGemm.device(Platform.CUDA, L40S);  // 99 KiB per block, as sm_86
        PortableGemm.device(Platform.CUDA, H200);
        PortableGemm.device(Platform.CUDA, B200);
        IrisPlatformException turing = assertThrows(IrisPlatformException.class,
                () -> PortableGemm.device(Platform.CUDA, gpu("Tesla T4", 7, 5, 65536)));
        assertEquals("rank 2: not available on this GPU: gemm_portable needs compute capability 8.0 or later (mma.sync, "
                + "ldmatrix, cp.async); GPU 0 (Tesla T4) has 7.5", turing.getMessage());
        IrisPlatformException small = assertThrows(IrisPlatformException.class,
                () -> PortableGemm.device(Platform.CUDA, gpu("odd 8.6", 8, 6, 49152)));
        assertTrue(small.getMessage().contains("gemm_portable needs 98304 bytes of shared memory per block; GPU 0 (odd 8.6) allows 49152"),
                small.getMessage());
        assertThrows(IrisPlatformException.class, () -> PortableGemm.device(Platform.CUDA, gpu("odd 8.0", 8, 0, 98303)),
                "the wide kernels' 96 KiB");
        IrisPlatformException hip = assertThrows(IrisPlatformException.class,
                () -> PortableGemm.device(Platform.HIP, gpu("AMD Instinct MI300X", 9, 4, 65536)));
        assertTrue(hip.getMessage().startsWith("rank 2: not available on this platform (HIP): gemm_portable needs"), hip.getMessage());
    }
}

package dev.irisjvm.kernels.gemm;

import static dev.irisjvm.kernels.OperandAddresses.A;
import static dev.irisjvm.kernels.OperandAddresses.B;
import static dev.irisjvm.kernels.OperandAddresses.BIAS;
import static dev.irisjvm.kernels.OperandAddresses.C;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.kernels.CheckRank;
import dev.irisjvm.kernels.gemm.GemmChecks.Operand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * Every rule of the GEMM's argument checks, without a GPU: each failure names the rank, the operand
 * and what was expected; each legal corner passes.
 */
class GemmChecksTest {
    @RegisterExtension
    static final CheckRank RANK = new CheckRank(2);

    private static DeviceMatrix mat(long address, DType t, long rows, long cols) {
        return DeviceMatrix.contiguous(address, t, rows, cols);
    }

    /** A contiguous problem of M x N x K with B in the given layout. */
    private static GemmProblem problem(long m, long n, long k, GemmLayout layout, DType in, DType out, long bias) {
        return new GemmProblem(mat(A, in, m, k), mat(B, in, layout.bRows(n, k), layout.bCols(n, k)), layout, bias,
                mat(C, out, m, n));
    }

    private static void rejects(String expected, Executable call) {
        RANK.rejects("gemm", expected, call);
    }

    // ---- what passes -------------------------------------------------------------------------------

    @Test
    void everyKernelHasItsProblem() {
        String[] expected = {
                "iris_gemm_bf16_nk_bf16", "iris_gemm_bf16_nk_f32", "iris_gemm_bf16_kn_bf16", "iris_gemm_bf16_kn_f32",
                "iris_gemm_f16_nk_f16", "iris_gemm_f16_nk_f32", "iris_gemm_f16_kn_f16", "iris_gemm_f16_kn_f32"};
        int i = 0;
        for (DType in : new DType[] {DType.BF16, DType.F16}) {
            for (GemmLayout layout : GemmLayout.values()) {
                for (DType out : new DType[] {in, DType.F32}) {
                    GemmProblem p = problem(200, 136, 72, layout, in, out, BIAS);
                    assertEquals(expected[i++], p.kernelName());
                    assertEquals(200, p.m());
                    assertEquals(136, p.n());
                    assertEquals(72, p.k());
                    assertEquals(136, p.ldc());
                    assertTrue(p.hasBias());
                }
            }
        }
    }

    @Test
    void smallestAndRaggedShapesPass() {
        GemmProblem one = problem(1, 8, 8, GemmLayout.NK, DType.BF16, DType.BF16, 0);
        assertEquals(1, one.tiles());
        assertEquals(2.0 * 8 * 8, one.flops());
        GemmProblem ragged = problem(129, 264, 520, GemmLayout.KN, DType.F16, DType.F32, 0);
        assertEquals(2 * 2, ragged.tiles(), "ceil(129 / 128) x ceil(264 / 256)");
    }

    @Test
    void launchShapeIsPersistent() {
        GemmProblem small = problem(200, 136, 72, GemmLayout.NK, DType.BF16, DType.BF16, 0);
        LaunchShape s = Gemm.launchShape(small, 132);
        assertEquals(8, s.gridX(), "2 x 1 tiles of 128 x 256 leave SMs idle: 4 x 2 of 64 x 128 in pairs, one block per tile");
        assertEquals(Gemm.SHORT_THREADS, s.blockX());
        assertEquals(230400, s.sharedBytes(), "the pipeline and the buffers of the TMA stores of C");
        GemmProblem big = problem(8192, 8192, 64, GemmLayout.NK, DType.BF16, DType.BF16, 0);
        assertEquals(64 * 32, big.tiles());
        assertEquals(132, Gemm.launchShape(big, 132).gridX(), "one block per SM, each taking several tiles");
    }

    @Test
    void stridedOperandsPass() {
        // A: rows 0..99 of a 100 x 128 buffer's first 64 columns; C: 136 of 256 columns.
        GemmProblem p = new GemmProblem(new DeviceMatrix(A, DType.BF16, 100, 64, 128), new DeviceMatrix(B, DType.BF16, 64, 136, 144),
                GemmLayout.KN, 0, new DeviceMatrix(C, DType.F32, 100, 136, 256));
        assertEquals(256, p.ldc());
    }

    // ---- dtypes ------------------------------------------------------------------------------------

    @Test
    void dtypeCombinations() {
        rejects("unsupported dtype combination A F32 x B F32 -> C F32; supported: A and B both BF16 or both F16, C of the same type or F32",
                () -> problem(64, 64, 64, GemmLayout.NK, DType.F32, DType.F32, 0));
        rejects("A BF16 x B F16 -> C F32", () -> new GemmProblem(mat(A, DType.BF16, 64, 64), mat(B, DType.F16, 64, 64),
                GemmLayout.NK, 0, mat(C, DType.F32, 64, 64)));
        rejects("A BF16 x B BF16 -> C F16", () -> problem(64, 64, 64, GemmLayout.NK, DType.BF16, DType.F16, 0));
        rejects("A F16 x B F16 -> C BF16", () -> problem(64, 64, 64, GemmLayout.KN, DType.F16, DType.BF16, 0));
        rejects("A I32 x B I32 -> C I32", () -> problem(64, 64, 64, GemmLayout.KN, DType.I32, DType.I32, 0));
        rejects("A F16 x B F16 -> C F64", () -> problem(64, 64, 64, GemmLayout.KN, DType.F16, DType.F64, 0));
    }

    // ---- shapes ------------------------------------------------------------------------------------

    @Test
    void emptyDimensions() {
        rejects("A (M x K) is 0 x 64; M and K must be >= 1", () -> problem(0, 64, 64, GemmLayout.NK, DType.BF16, DType.BF16, 0));
        rejects("A (M x K) is 64 x 0", () -> new GemmProblem(mat(A, DType.BF16, 64, 0), mat(B, DType.BF16, 64, 0),
                GemmLayout.NK, 0, mat(C, DType.BF16, 64, 64)));
        rejects("B (nk: N x K) is 0 x 64; N must be >= 1", () -> problem(64, 0, 64, GemmLayout.NK, DType.BF16, DType.BF16, 0));
        rejects("B (kn: K x N) is 64 x 0; N must be >= 1", () -> problem(64, 0, 64, GemmLayout.KN, DType.BF16, DType.BF16, 0));
    }

    @Test
    void bMustMatchK() {
        rejects("B (nk: N x K) is 128 x 72; expected K = 64 columns (A is 200 x 64)",
                () -> new GemmProblem(mat(A, DType.BF16, 200, 64), mat(B, DType.BF16, 128, 72), GemmLayout.NK, 0,
                        mat(C, DType.BF16, 200, 128)));
        rejects("B (kn: K x N) is 72 x 128; expected K = 64 rows (A is 200 x 64)",
                () -> new GemmProblem(mat(A, DType.BF16, 200, 64), mat(B, DType.BF16, 72, 128), GemmLayout.KN, 0,
                        mat(C, DType.BF16, 200, 128)));
    }

    @Test
    void cMustBeMByN() {
        rejects("C is 200 x 128; expected M x N = 200 x 136", () -> new GemmProblem(mat(A, DType.BF16, 200, 64),
                mat(B, DType.BF16, 136, 64), GemmLayout.NK, 0, mat(C, DType.BF16, 200, 128)));
        rejects("C is 199 x 136; expected M x N = 200 x 136", () -> new GemmProblem(mat(A, DType.BF16, 200, 64),
                mat(B, DType.BF16, 64, 136), GemmLayout.KN, 0, mat(C, DType.F32, 199, 136)));
    }

    @Test
    void kAndNAreMultiplesOfEight() {
        rejects("K = 100 (A's columns) is not a multiple of 8 (TMA copies rows of A and B in 16-byte units)",
                () -> problem(64, 64, 100, GemmLayout.NK, DType.BF16, DType.BF16, 0));
        rejects("K = 4 (A's columns) is not a multiple of 8 (TMA copies rows of A in 16-byte units)",
                () -> problem(64, 64, 4, GemmLayout.KN, DType.BF16, DType.BF16, 0));
        rejects("N = 100 is not a multiple of 8 (C is stored in 16-byte vectors)",
                () -> problem(64, 100, 64, GemmLayout.NK, DType.BF16, DType.F32, 0));
        rejects("N = 12 is not a multiple of 8 (C is stored in 16-byte vectors, and TMA copies rows of B in 16-byte units)",
                () -> problem(64, 12, 64, GemmLayout.KN, DType.F16, DType.F16, 0));
    }

    @Test
    void sizesFitTheKernelsInts() {
        rejects("M = 2147483648 exceeds 2^31 - 1 (the kernel takes it as an int)",
                () -> problem(1L << 31, 8, 8, GemmLayout.NK, DType.BF16, DType.BF16, 0));
        rejects("ldc = 4294967296 exceeds 2^31 - 1", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8),
                GemmLayout.NK, 0, new DeviceMatrix(C, DType.BF16, 8, 8, 1L << 32)));
    }

    @Test
    void leadingDimensions() {
        rejects("A's leading dimension 56 is less than its 64 columns", () -> new GemmProblem(new DeviceMatrix(A, DType.BF16, 8, 64, 56),
                mat(B, DType.BF16, 8, 64), GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("A's leading dimension 68 is not a multiple of 8 (every row must start 16-byte aligned)",
                () -> new GemmProblem(new DeviceMatrix(A, DType.BF16, 8, 64, 68), mat(B, DType.BF16, 8, 64), GemmLayout.NK, 0,
                        mat(C, DType.BF16, 8, 8)));
        rejects("B (nk: N x K)'s leading dimension 60 is less than its 64 columns", () -> new GemmProblem(mat(A, DType.BF16, 8, 64),
                new DeviceMatrix(B, DType.BF16, 8, 64, 60), GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("B (kn: K x N)'s leading dimension 20 is not a multiple of 8", () -> new GemmProblem(mat(A, DType.BF16, 8, 64),
                new DeviceMatrix(B, DType.BF16, 64, 16, 20), GemmLayout.KN, 0, mat(C, DType.BF16, 8, 16)));
        rejects("C's leading dimension 8 is less than its 16 columns", () -> new GemmProblem(mat(A, DType.BF16, 8, 64),
                mat(B, DType.BF16, 16, 64), GemmLayout.NK, 0, new DeviceMatrix(C, DType.F32, 8, 16, 8)));
        rejects("C's leading dimension 20 is not a multiple of 8", () -> new GemmProblem(mat(A, DType.BF16, 8, 64),
                mat(B, DType.BF16, 16, 64), GemmLayout.NK, 0, new DeviceMatrix(C, DType.F32, 8, 16, 20)));
    }

    @Test
    void pointers() {
        rejects("A's address is 0 (NULL)", () -> new GemmProblem(mat(0, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8),
                GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("A's address 0x7f1000000008 is not 16-byte aligned", () -> new GemmProblem(mat(A + 8, DType.BF16, 8, 8),
                mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("B's address 0x7f2000000002 is not 16-byte aligned", () -> new GemmProblem(mat(A, DType.BF16, 8, 8),
                mat(B + 2, DType.BF16, 8, 8), GemmLayout.KN, 0, mat(C, DType.BF16, 8, 8)));
        rejects("C's address 0x7f3000000004 is not 16-byte aligned", () -> new GemmProblem(mat(A, DType.BF16, 8, 8),
                mat(B, DType.BF16, 8, 8), GemmLayout.KN, 0, mat(C + 4, DType.F32, 8, 8)));
        rejects("C's address is 0 (NULL)", () -> new GemmProblem(mat(A, DType.BF16, 8, 8),
                mat(B, DType.BF16, 8, 8), GemmLayout.KN, 0, mat(0, DType.F32, 8, 8)));
        rejects("bias's address 0x7f4000000008 is not 16-byte aligned",
                () -> problem(8, 8, 8, GemmLayout.NK, DType.BF16, DType.BF16, BIAS + 8));
    }

    @Test
    void theOutputMustNotAliasAnInput() {
        rejects("C [0x7f1000000000, +128 bytes) overlaps A [0x7f1000000000, +128 bytes); the output must not alias an input",
                () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0, mat(A, DType.BF16, 8, 8)));
        rejects("overlaps B", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0,
                mat(B + 64, DType.F32, 8, 8)));
        rejects("overlaps bias [0x7f3000000010, +16 bytes)", () -> problem(8, 8, 8, GemmLayout.NK, DType.BF16, DType.BF16, C + 16));
        // Touching is not overlapping: C right after A.
        new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0, mat(A + 128, DType.BF16, 8, 8));
        // A window of C is judged by its whole span, first element to last: conservative (an input
        // wholly inside C's padding columns would be safe, and is rejected too), never unsafe.
        rejects("overlaps A", () -> new GemmProblem(mat(C + 32, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0,
                new DeviceMatrix(C, DType.BF16, 8, 8, 64)));
    }

    @Test
    void nullsAreNamed() {
        rejects("A must not be null", () -> new GemmProblem(null, mat(B, DType.BF16, 8, 8), GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("B must not be null", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), null, GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8)));
        rejects("layout must not be null", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), null, 0,
                mat(C, DType.BF16, 8, 8)));
        rejects("C must not be null", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), GemmLayout.KN, 0, null));
    }

    // ---- tensors -----------------------------------------------------------------------------------

    private static Operand t(String name, DType dtype, long... shape) {
        return new Operand(name, dtype, shape, true, dtype + java.util.Arrays.toString(shape));
    }

    /** The tensor form with an M x K A. */
    private static void tensors(Operand a, Operand b, GemmLayout layout, Operand bias, Operand c) {
        GemmChecks.tensors(a, GemmALayout.MK, b, layout, bias, c);
    }

    @Test
    void tensorShapes() {
        tensors(t("A", DType.BF16, 200, 72), t("B", DType.BF16, 136, 72), GemmLayout.NK, t("bias", DType.BF16, 136),
                t("C", DType.BF16, 200, 136));
        tensors(t("A", DType.F16, 200, 72), t("B", DType.F16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 200, 136));
        rejects("A F16[200] has rank 1; expected a rank-2 M x K tensor", () -> tensors(t("A", DType.F16, 200),
                t("B", DType.F16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 200, 136)));
        rejects("B F16[2, 72, 136] has rank 3; expected a rank-2 K x N tensor (B (kn: K x N))",
                () -> tensors(t("A", DType.F16, 200, 72), t("B", DType.F16, 2, 72, 136), GemmLayout.KN, null,
                        t("C", DType.F32, 200, 136)));
        rejects("C F32[27200] has rank 1; expected a rank-2 M x N tensor", () -> tensors(t("A", DType.F16, 200, 72),
                t("B", DType.F16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 27200)));
        rejects("B (nk: N x K) BF16[72, 136] does not match A BF16[200, 72]: expected shape [N, 72] (K = 72)",
                () -> tensors(t("A", DType.BF16, 200, 72), t("B", DType.BF16, 72, 136), GemmLayout.NK, null,
                        t("C", DType.BF16, 200, 136)));
        rejects("B (kn: K x N) BF16[136, 72] does not match A BF16[200, 72]: expected shape [72, N] (K = 72)",
                () -> tensors(t("A", DType.BF16, 200, 72), t("B", DType.BF16, 136, 72), GemmLayout.KN, null,
                        t("C", DType.BF16, 200, 136)));
        rejects("C BF16[136, 200] has shape [136, 200]; expected [M, N] = [200, 136]",
                () -> tensors(t("A", DType.BF16, 200, 72), t("B", DType.BF16, 136, 72), GemmLayout.NK, null,
                        t("C", DType.BF16, 136, 200)));
    }

    @Test
    void tensorBias() {
        rejects("bias BF16[1, 136] has shape [1, 136]; expected [N] = [136]", () -> tensors(t("A", DType.BF16, 200, 72),
                t("B", DType.BF16, 136, 72), GemmLayout.NK, t("bias", DType.BF16, 1, 136), t("C", DType.BF16, 200, 136)));
        rejects("bias BF16[128] has shape [128]; expected [N] = [136]", () -> tensors(t("A", DType.BF16, 200, 72),
                t("B", DType.BF16, 136, 72), GemmLayout.NK, t("bias", DType.BF16, 128), t("C", DType.BF16, 200, 136)));
        rejects("bias has dtype BF16; expected F32 (C's dtype)", () -> tensors(t("A", DType.BF16, 200, 72),
                t("B", DType.BF16, 136, 72), GemmLayout.NK, t("bias", DType.BF16, 136), t("C", DType.F32, 200, 136)));
    }

    @Test
    void tensorDtypesAndLiveness() {
        rejects("unsupported dtype combination A BF16 x B BF16 -> C F16", () -> tensors(t("A", DType.BF16, 8, 8),
                t("B", DType.BF16, 8, 8), GemmLayout.NK, null, t("C", DType.F16, 8, 8)));
        Operand freed = new Operand("B", DType.BF16, new long[] {8, 8}, false, "SymTensor(BF16[8, 8]@4096, freed)");
        rejects("B SymTensor(BF16[8, 8]@4096, freed) was freed", () -> tensors(t("A", DType.BF16, 8, 8), freed,
                GemmLayout.NK, null, t("C", DType.BF16, 8, 8)));
        rejects("C must not be null", () -> tensors(t("A", DType.BF16, 8, 8), t("B", DType.BF16, 8, 8), GemmLayout.NK,
                null, null));
    }

    // ---- device and options ------------------------------------------------------------------------

    private static DeviceProperties gpu(String name, int major, int minor, long smem) {
        return new DeviceProperties(0, name, major, minor, 132, 32, 1024, 0, 0x1b, 0, 141L << 30, 60L << 20, smem);
    }

    @Test
    void needsHopper() {
        GemmChecks.device(Platform.CUDA, gpu("NVIDIA H200", 9, 0, 232448));
        IrisPlatformException ampere = assertThrows(IrisPlatformException.class,
                () -> GemmChecks.device(Platform.CUDA, gpu("NVIDIA A100-SXM4-80GB", 8, 0, 166912)));
        assertEquals("rank 2: not available on this GPU: gemm needs compute capability 9.0 (sm_90a (wgmma, TMA)); "
                + "GPU 0 (NVIDIA A100-SXM4-80GB) has 8.0", ampere.getMessage());
        assertSame(Platform.CUDA, ampere.platform());
        assertThrows(IrisPlatformException.class, () -> GemmChecks.device(Platform.CUDA, gpu("NVIDIA B200", 10, 0, 232448)),
                "sm_90a code does not run on 10.0");
        IrisPlatformException small = assertThrows(IrisPlatformException.class,
                () -> GemmChecks.device(Platform.CUDA, gpu("odd 9.0", 9, 0, 200_000)));
        assertTrue(small.getMessage().contains("gemm needs 230400 bytes of shared memory per block; GPU 0 (odd 9.0) allows 200000"),
                small.getMessage());
        IrisPlatformException hip = assertThrows(IrisPlatformException.class,
                () -> GemmChecks.device(Platform.HIP, gpu("AMD Instinct MI300X", 9, 4, 65536)));
        assertEquals("rank 2: not available on this platform (HIP): gemm needs sm_90a (wgmma, TMA)", hip.getMessage());
    }

    @Test
    void groupM() {
        assertEquals(8, Gemm.Options.defaults().groupM());
        assertEquals(1, Gemm.Options.defaults().withGroupM(1).groupM());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Gemm.Options.defaults().withGroupM(0));
        assertEquals("rank 2: gemm: groupM must be >= 1 (tile rows per group of the tile order), got 0", e.getMessage());
    }

    @Test
    void deviceMatrixSpans() {
        assertEquals((7 * 64 + 8) * 2, new DeviceMatrix(A, DType.BF16, 8, 8, 64).spanBytes());
        assertEquals(0, new DeviceMatrix(A, DType.BF16, 0, 8, 8).spanBytes());
        assertEquals(Long.MAX_VALUE, new DeviceMatrix(A, DType.F32, 1L << 40, 8, 1L << 40).spanBytes());
        assertEquals("BF16 8 x 8 (ld 64) at 0x7f1000000000", new DeviceMatrix(A, DType.BF16, 8, 8, 64).toString());
        assertThrows(IllegalArgumentException.class, () -> new DeviceMatrix(A, null, 8, 8, 8));
    }

    @Test
    void layouts() {
        assertEquals(136, GemmLayout.NK.bRows(136, 72));
        assertEquals(72, GemmLayout.NK.bCols(136, 72));
        assertEquals(72, GemmLayout.KN.bRows(136, 72));
        assertEquals(136, GemmLayout.KN.bCols(136, 72));
        assertEquals("nk", GemmLayout.NK.kernelSuffix());
        assertEquals("K x N", GemmLayout.KN.shape());
    }
}

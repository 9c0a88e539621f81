package dev.irisjvm.kernels.gemm;

import static dev.irisjvm.kernels.OperandAddresses.A;
import static dev.irisjvm.kernels.OperandAddresses.B;
import static dev.irisjvm.kernels.OperandAddresses.BIAS;
import static dev.irisjvm.kernels.OperandAddresses.C;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.CheckRank;
import dev.irisjvm.kernels.gemm.GemmChecks.Operand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * The rules of a transposed (K x M) A and of the scaling C = alpha A B + beta C, without a GPU:
 * which shapes, strides and factors pass, and what each refusal says.
 */
class GemmLayoutsChecksTest {
    @RegisterExtension
    static final CheckRank RANK = new CheckRank(3);

    private static DeviceMatrix mat(long address, DType t, long rows, long cols) {
        return DeviceMatrix.contiguous(address, t, rows, cols);
    }

    /** M x N x K, both operands contiguous in the given layouts. */
    private static GemmProblem problem(long m, long n, long k, GemmLayouts layouts, DType in, DType out, float alpha, float beta) {
        return new GemmProblem(mat(A, in, layouts.a().aRows(m, k), layouts.a().aCols(m, k)),
                mat(B, in, layouts.b().bRows(n, k), layouts.b().bCols(n, k)), layouts, 0, mat(C, out, m, n), alpha, beta);
    }

    private static void rejects(String expected, Executable call) {
        RANK.rejects("gemm", expected, call);
    }

    // ---- what passes -------------------------------------------------------------------------------

    @Test
    void everyLayoutPairReadsMNAndKFromTheRightDimensions() {
        for (GemmLayouts layouts : new GemmLayouts[] {GemmLayouts.MK_NK, GemmLayouts.MK_KN, GemmLayouts.KM_NK, GemmLayouts.KM_KN}) {
            GemmProblem p = problem(200, 136, 72, layouts, DType.BF16, DType.F32, 1f, 0f);
            assertEquals(200, p.m(), layouts.toString());
            assertEquals(136, p.n(), layouts.toString());
            assertEquals(72, p.k(), layouts.toString());
            assertEquals(layouts, p.layouts());
            assertEquals(2, p.tiles(), "ceil(200 / 128) x ceil(136 / 256)");
            assertEquals(2.0 * 200 * 136 * 72, p.flops());
        }
        assertEquals("iris_gemm_bf16_km_kn_f32", problem(200, 136, 72, GemmLayouts.KM_KN, DType.BF16, DType.F32, 1f, 1f).kernelName());
        assertEquals("iris_gemm_f16_km_nk_f16", problem(200, 136, 72, GemmLayouts.KM_NK, DType.F16, DType.F16, 1f, 0f).kernelName());
        assertEquals("iris_gemm_bf16_nk_bf16", problem(200, 136, 72, GemmLayouts.MK_NK, DType.BF16, DType.BF16, 1f, 0f).kernelName());
    }

    @Test
    void aKmAWithAKnBTakesAnyK() {
        // Neither operand's rows run along K, so TMA never copies a row of K elements.
        GemmProblem p = problem(136, 264, 101, GemmLayouts.KM_KN, DType.F16, DType.F16, 1f, 0f);
        assertEquals(101, p.k());
    }

    @Test
    void aStridedKmAPasses() {
        // A: the first 200 columns of a 72 x 264 buffer (M contiguous, ld 264).
        GemmProblem p = new GemmProblem(new DeviceMatrix(A, DType.BF16, 72, 200, 264), mat(B, DType.BF16, 72, 136),
                GemmLayouts.KM_KN, 0, new DeviceMatrix(C, DType.BF16, 200, 136, 144), 1f, 0f);
        assertEquals(200, p.m());
        assertEquals(144, p.ldc());
    }

    @Test
    void scalingFactorsAndTheBiasTogether() {
        GemmProblem p = new GemmProblem(mat(A, DType.BF16, 72, 200), mat(B, DType.BF16, 136, 72), GemmLayouts.KM_NK, BIAS,
                mat(C, DType.BF16, 200, 136), -0.5f, 2f);
        assertTrue(p.hasBias());
        assertTrue(p.readsC());
        assertEquals(-0.5f, p.alpha());
        assertTrue(p.toString().contains("alpha -0.5, beta 2.0"), p.toString());
        GemmProblem plain = problem(200, 136, 72, GemmLayouts.MK_NK, DType.BF16, DType.BF16, 1f, 0f);
        assertFalse(plain.readsC());
        assertFalse(plain.toString().contains("alpha"), plain.toString());
    }

    // ---- what is refused ---------------------------------------------------------------------------

    @Test
    void nonFiniteFactors() {
        rejects("alpha = NaN is not finite; expected a finite scale factor",
                () -> problem(64, 64, 64, GemmLayouts.MK_NK, DType.BF16, DType.BF16, Float.NaN, 0f));
        rejects("beta = Infinity is not finite", () -> problem(64, 64, 64, GemmLayouts.KM_KN, DType.BF16, DType.F32, 1f,
                Float.POSITIVE_INFINITY));
        rejects("beta = -Infinity is not finite", () -> problem(64, 64, 64, GemmLayouts.KM_KN, DType.BF16, DType.F32, 1f,
                Float.NEGATIVE_INFINITY));
    }

    @Test
    void missingLayouts() {
        rejects("A's layout must not be null", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), null, mat(B, DType.BF16, 8, 8),
                GemmLayout.NK, 0, mat(C, DType.BF16, 8, 8), 1f, 0f));
        rejects("layouts must not be null", () -> new GemmProblem(mat(A, DType.BF16, 8, 8), mat(B, DType.BF16, 8, 8), null, 0,
                mat(C, DType.BF16, 8, 8), 1f, 0f));
        rejects("A's layout must not be null", () -> new GemmLayouts(null, GemmLayout.NK));
        rejects("B's layout must not be null", () -> new GemmLayouts(GemmALayout.KM, null));
    }

    @Test
    void kmShapes() {
        rejects("A (km: K x M) is 0 x 64; M and K must be >= 1", () -> new GemmProblem(mat(A, DType.BF16, 0, 64),
                mat(B, DType.BF16, 0, 64), GemmLayouts.KM_KN, 0, mat(C, DType.BF16, 64, 64), 1f, 0f));
        rejects("B (nk: N x K) is 136 x 64; expected K = 72 columns (A is 72 x 200, K x M)",
                () -> new GemmProblem(mat(A, DType.BF16, 72, 200), mat(B, DType.BF16, 136, 64), GemmLayouts.KM_NK, 0,
                        mat(C, DType.BF16, 200, 136), 1f, 0f));
        rejects("B (kn: K x N) is 200 x 136; expected K = 72 rows (A is 72 x 200, K x M)",
                () -> new GemmProblem(mat(A, DType.BF16, 72, 200), mat(B, DType.BF16, 200, 136), GemmLayouts.KM_KN, 0,
                        mat(C, DType.BF16, 200, 136), 1f, 0f));
        rejects("C is 72 x 136; expected M x N = 200 x 136", () -> new GemmProblem(mat(A, DType.BF16, 72, 200),
                mat(B, DType.BF16, 72, 136), GemmLayouts.KM_KN, 0, mat(C, DType.BF16, 72, 136), 1f, 0f));
    }

    @Test
    void tmaNeedsSixteenByteRowsOfEveryOperand() {
        rejects("M = 129 (A (km: K x M)'s columns) is not a multiple of 8 (TMA copies rows of A in 16-byte units)",
                () -> problem(129, 136, 72, GemmLayouts.KM_KN, DType.BF16, DType.BF16, 1f, 0f));
        rejects("K = 100 (B's columns) is not a multiple of 8 (TMA copies rows of B in 16-byte units)",
                () -> problem(128, 136, 100, GemmLayouts.KM_NK, DType.BF16, DType.BF16, 1f, 0f));
        rejects("K = 100 (A's columns) is not a multiple of 8 (TMA copies rows of A and B in 16-byte units)",
                () -> problem(128, 136, 100, GemmLayouts.MK_NK, DType.BF16, DType.BF16, 1f, 0f));
        rejects("N = 130 is not a multiple of 8", () -> problem(128, 130, 64, GemmLayouts.KM_KN, DType.BF16, DType.BF16, 1f, 0f));
        rejects("A (km: K x M)'s leading dimension 204 is not a multiple of 8 (every row must start 16-byte aligned)",
                () -> new GemmProblem(new DeviceMatrix(A, DType.BF16, 72, 200, 204), mat(B, DType.BF16, 72, 136), GemmLayouts.KM_KN,
                        0, mat(C, DType.BF16, 200, 136), 1f, 0f));
        rejects("A (km: K x M)'s leading dimension 192 is less than its 200 columns",
                () -> new GemmProblem(new DeviceMatrix(A, DType.BF16, 72, 200, 192), mat(B, DType.BF16, 72, 136), GemmLayouts.KM_KN,
                        0, mat(C, DType.BF16, 200, 136), 1f, 0f));
        rejects("A's address 0x7f1000000008 is not 16-byte aligned", () -> new GemmProblem(mat(A + 8, DType.BF16, 72, 200),
                mat(B, DType.BF16, 72, 136), GemmLayouts.KM_KN, 0, mat(C, DType.BF16, 200, 136), 1f, 1f));
    }

    @Test
    void cReadWithBetaMustStillNotAliasAnInput() {
        rejects("overlaps A", () -> new GemmProblem(mat(A, DType.BF16, 72, 200), mat(B, DType.BF16, 72, 136), GemmLayouts.KM_KN, 0,
                mat(A + 64, DType.BF16, 200, 136), 1f, 1f));
    }

    @Test
    void dtypesAreTheSameForEveryLayout() {
        rejects("unsupported dtype combination A BF16 x B BF16 -> C F16",
                () -> problem(64, 64, 64, GemmLayouts.KM_KN, DType.BF16, DType.F16, 1f, 1f));
        rejects("kernels iris_gemm_<bf16|f16>[_km]_<nk|kn>_<in|f32>",
                () -> problem(64, 64, 64, GemmLayouts.KM_NK, DType.F32, DType.F32, 1f, 0f));
    }

    // ---- the tensor form ---------------------------------------------------------------------------

    private static Operand t(String name, DType dtype, long... shape) {
        return new Operand(name, dtype, shape, true, dtype + java.util.Arrays.toString(shape));
    }

    @Test
    void kmTensors() {
        GemmChecks.tensors(t("A", DType.BF16, 72, 200), GemmALayout.KM, t("B", DType.BF16, 72, 136), GemmLayout.KN, null,
                t("C", DType.F32, 200, 136));
        GemmChecks.tensors(t("A", DType.BF16, 72, 200), GemmALayout.KM, t("B", DType.BF16, 136, 72), GemmLayout.NK,
                t("bias", DType.BF16, 136), t("C", DType.BF16, 200, 136));
        rejects("A BF16[200] has rank 1; expected a rank-2 K x M tensor (A (km: K x M))", () -> GemmChecks.tensors(
                t("A", DType.BF16, 200), GemmALayout.KM, t("B", DType.BF16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 200, 136)));
        rejects("B (kn: K x N) BF16[64, 136] does not match A (km: K x M) BF16[72, 200]: expected shape [72, N] (K = 72)",
                () -> GemmChecks.tensors(t("A", DType.BF16, 72, 200), GemmALayout.KM, t("B", DType.BF16, 64, 136), GemmLayout.KN,
                        null, t("C", DType.F32, 200, 136)));
        rejects("C F32[72, 136] has shape [72, 136]; expected [M, N] = [200, 136]", () -> GemmChecks.tensors(
                t("A", DType.BF16, 72, 200), GemmALayout.KM, t("B", DType.BF16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 72, 136)));
        rejects("A's layout must not be null", () -> GemmChecks.tensors(t("A", DType.BF16, 72, 200), null,
                t("B", DType.BF16, 72, 136), GemmLayout.KN, null, t("C", DType.F32, 200, 136)));
    }

    // ---- the layout types --------------------------------------------------------------------------

    @Test
    void layoutNamesAndShapes() {
        assertEquals("nk", GemmLayouts.MK_NK.kernelPart());
        assertEquals("kn", GemmLayouts.MK_KN.kernelPart());
        assertEquals("km_nk", GemmLayouts.KM_NK.kernelPart());
        assertEquals("km_kn", GemmLayouts.KM_KN.kernelPart());
        assertEquals("KM_KN", GemmLayouts.KM_KN.toString());
        assertEquals(GemmLayouts.KM_NK, new GemmLayouts(GemmALayout.KM, GemmLayout.NK));
        assertEquals(72, GemmALayout.KM.aRows(200, 72));
        assertEquals(200, GemmALayout.KM.aCols(200, 72));
        assertEquals(200, GemmALayout.MK.aRows(200, 72));
        assertEquals(72, GemmALayout.MK.aCols(200, 72));
        assertEquals("K x M", GemmALayout.KM.shape());
        assertEquals("km", GemmALayout.KM.suffix());
    }
}

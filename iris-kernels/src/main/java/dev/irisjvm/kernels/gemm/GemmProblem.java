package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import java.util.Locale;

/**
 * One GEMM, checked: {@code C[m][n] = alpha sum_k A(m, k) * B(k, n) + beta C[m][n] (+ bias[n])} on
 * device matrices.
 * Creating one checks every rule of the kernels (see {@link Gemm}) and throws {@link
 * IllegalArgumentException} naming the rank, the operand and what was expected; an instance is
 * therefore always launchable.
 *
 * <pre>{@code
 * GemmProblem p = new GemmProblem(DeviceMatrix.of(x), DeviceMatrix.of(w), GemmLayout.NK, 0, DeviceMatrix.of(y));
 * p.m(); p.n(); p.k();      // from the shapes
 * p.kernelName();           // "iris_gemm_bf16_nk_bf16" ("iris_gemm_short_bf16_nk_bf16" for M <= 64)
 *
 * // dw += dy^T x: dy [T, out] (A, K x M), x [T, in] (B, K x N), dw [out, in] F32
 * GemmProblem g = new GemmProblem(DeviceMatrix.of(dy), DeviceMatrix.of(x), GemmLayouts.KM_KN, 0, DeviceMatrix.of(dw), 1f, 1f);
 * g.kernelName();           // "iris_gemm_bf16_km_kn_f32"
 * }</pre>
 *
 * @param a       A, BF16 or F16: M x K for {@link GemmALayout#MK}, K x M for {@link GemmALayout#KM}
 * @param aLayout how A is stored
 * @param b       B of A's dtype: N x K for {@link GemmLayout#NK}, K x N for {@link GemmLayout#KN}
 * @param layout  how B is stored
 * @param bias    device address of N elements of C's dtype, or 0 for none; added after the scaling,
 *                not scaled by alpha
 * @param c       C, M x N, of A's dtype or F32; must not overlap A, B or the bias
 * @param alpha   the product's factor, finite
 * @param beta    C's factor, finite: 0 never reads C (it may hold anything, NaN included); otherwise C
 *                is read, in its dtype, before it is overwritten
 */
public record GemmProblem(DeviceMatrix a, GemmALayout aLayout, DeviceMatrix b, GemmLayout layout, long bias, DeviceMatrix c,
                          float alpha, float beta) {
    public GemmProblem {
        GemmChecks.problem(a, aLayout, b, layout, bias, c, alpha, beta);
    }

    /** {@code C = A B (+ bias)} with A M x K: alpha 1, beta 0. */
    public GemmProblem(DeviceMatrix a, DeviceMatrix b, GemmLayout layout, long bias, DeviceMatrix c) {
        this(a, GemmALayout.MK, b, layout, bias, c, 1f, 0f);
    }

    /** {@code C = alpha A B + beta C (+ bias)} with both operands' layouts in one argument. */
    public GemmProblem(DeviceMatrix a, DeviceMatrix b, GemmLayouts layouts, long bias, DeviceMatrix c, float alpha, float beta) {
        this(a, GemmChecks.layouts(layouts).a(), b, layouts.b(), bias, c, alpha, beta);
    }

    public int m() {
        return (int) (aLayout == GemmALayout.MK ? a.rows() : a.cols());
    }

    public int n() {
        return (int) c.cols();
    }

    public int k() {
        return (int) (aLayout == GemmALayout.MK ? a.cols() : a.rows());
    }

    /** Both operands' layouts. */
    public GemmLayouts layouts() {
        return new GemmLayouts(aLayout, layout);
    }

    /** Whether the kernel reads C (beta != 0). */
    public boolean readsC() {
        return beta != 0f;
    }

    /** C's leading dimension. */
    public int ldc() {
        return (int) c.ld();
    }

    public DType inputType() {
        return a.dtype();
    }

    public DType outputType() {
        return c.dtype();
    }

    public boolean hasBias() {
        return bias != 0;
    }

    /**
     * Output tiles of the problem's first tile ({@link #kernelName()}'s): ceil(M / 128) x ceil(N /
     * 256), or ceil(N / 128) tiles of {@link Gemm#SHORT_TILE_M} x {@link Gemm#SHORT_TILE_N} where M
     * is at most 64. A call may take the 128 x 128 tiles instead ({@link Gemm#schedule} says).
     */
    public int tiles() {
        return (int) GemmChecks.tiles(m(), n());
    }

    /** Floating-point operations, 2 M N K (the scaling and the bias not counted). */
    public double flops() {
        return 2.0 * m() * n() * k();
    }

    /**
     * The kernel of the problem's first tile: {@code iris_gemm[_short]_<in>[_km]_<nk|kn>_<out>},
     * {@code _short} where M is at most {@link Gemm#SHORT_TILE_M}. Where 128 x 256 tiles would leave
     * SMs idle a call may run {@code iris_gemm_narrow_...} instead ({@link Gemm#schedule} says).
     */
    public String kernelName() {
        return kernelName(GemmTile.of(m()), inputType(), layouts(), outputType());
    }

    static String kernelName(GemmTile tile, DType in, GemmLayouts layouts, DType out) {
        return "iris_gemm_" + tile.namePart() + in.name().toLowerCase(Locale.ROOT) + "_" + layouts.kernelPart() + "_"
                + out.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "GemmProblem(" + m() + " x " + n() + " x " + k() + ", " + kernelName() + ", A " + a + ", B " + b + ", C " + c
                + (hasBias() ? ", bias at 0x" + Long.toHexString(bias) : "")
                + (alpha != 1f || beta != 0f ? ", alpha " + alpha + ", beta " + beta : "") + ")";
    }
}

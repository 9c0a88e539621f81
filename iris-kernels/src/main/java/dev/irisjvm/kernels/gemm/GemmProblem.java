package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import java.util.Locale;

/**
 * One GEMM, checked: {@code C[m][n] = sum_k A[m][k] * B(k, n) (+ bias[n])} on device matrices.
 * Creating one checks every rule of the kernels (see {@link Gemm}) and throws {@link
 * IllegalArgumentException} naming the rank, the operand and what was expected; an instance is
 * therefore always launchable. Fused kernels that reuse the GEMM's mainloop take one of these,
 * {@link Gemm#tensorMapA}, {@link Gemm#tensorMapB} and {@link Gemm#launchShape}.
 *
 * <pre>{@code
 * GemmProblem p = new GemmProblem(DeviceMatrix.of(x), DeviceMatrix.of(w), GemmLayout.NK, 0, DeviceMatrix.of(y));
 * p.m(); p.n(); p.k();      // from the shapes
 * p.kernelName();           // "iris_gemm_bf16_nk_bf16"
 * }</pre>
 *
 * @param a      A, M x K, BF16 or F16
 * @param b      B of A's dtype: N x K for {@link GemmLayout#NK}, K x N for {@link GemmLayout#KN}
 * @param layout how B is stored
 * @param bias   device address of N elements of C's dtype, or 0 for none
 * @param c      C, M x N, of A's dtype or F32; must not overlap A, B or the bias
 */
public record GemmProblem(DeviceMatrix a, DeviceMatrix b, GemmLayout layout, long bias, DeviceMatrix c) {
    public GemmProblem {
        GemmChecks.problem(a, b, layout, bias, c);
    }

    public int m() {
        return (int) a.rows();
    }

    public int n() {
        return (int) c.cols();
    }

    public int k() {
        return (int) a.cols();
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

    /** Output tiles of {@link Gemm#TILE_M} x {@link Gemm#TILE_N}: ceil(M / 128) x ceil(N / 256). */
    public int tiles() {
        return (int) GemmChecks.tiles(a.rows(), c.cols());
    }

    /** Floating-point operations, 2 M N K (the bias not counted). */
    public double flops() {
        return 2.0 * a.rows() * c.cols() * a.cols();
    }

    /** The kernel this problem runs: {@code iris_gemm_<in>_<nk|kn>_<out>}. */
    public String kernelName() {
        return kernelName(inputType(), layout, outputType());
    }

    static String kernelName(DType in, GemmLayout layout, DType out) {
        return "iris_gemm_" + in.name().toLowerCase(Locale.ROOT) + "_" + layout.kernelSuffix() + "_"
                + out.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "GemmProblem(" + m() + " x " + n() + " x " + k() + ", " + kernelName() + ", A " + a + ", B " + b + ", C " + c
                + (hasBias() ? ", bias at 0x" + Long.toHexString(bias) : "") + ")";
    }
}

package dev.irisjvm.kernels.gemm;

import static dev.irisjvm.kernels.gemm.GemmScenarios.PAD;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.gemm.GemmReference.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * {@link GemmScenarios}' cases of a transposed (K x M) A and of {@code C = alpha A B + beta C}, under
 * the same rules (fresh inputs per case, poisoned outputs, the double reference within the derived
 * bound, padding neither read nor written).
 */
final class GemmLayoutScenarios extends GemmScenarioPart {
    /**
     * (M, N, K) for a K x M A: one 8 x 8 corner of a tile, ragged edges in every dimension (M a
     * multiple of 8, as A's rows need), more than one tile each way.
     */
    static final int[][] TRANSPOSED_SHAPES = {{8, 8, 8}, {48, 264, 520}, {200, 136, 72}, {136, 264, 520}, {296, 520, 1000}};
    /** A K that is no multiple of 8 (nor of the 64 of a k-block): K x M A with K x N B takes it, as no row runs along K. */
    static final int[] RAGGED_K = {200, 136, 101};
    /** (M, N, K) of the scaling's cases, every layout pair; 8 rows of an M x K A run the skinny kernels, {8, 264, 1000} in slices of K. */
    static final int[][] SCALED_SHAPES = {{8, 8, 8}, {8, 264, 1000}, {200, 136, 72}, {136, 264, 520}};
    /** (alpha, beta): accumulation, both scaled (beta negative), and beta 0 over poison (C must not be read). */
    static final float[][] SCALES = {{1f, 1f}, {0.5f, -1.5f}, {-2f, 0f}};

    GemmLayoutScenarios(GemmScenarios s, Iris iris, Gemm gemm) {
        super(s, iris, gemm);
    }

    // =============================================================================================
    // A stored K x M
    // =============================================================================================

    /**
     * Every shape x input dtype x B layout x output dtype x bias or not with A stored K x M, through
     * both entry points: symmetric tensors, and device matrices with padded rows (lda = M + 8, ldb =
     * B's columns + 8, ldc = N + 8, and a row of C beyond M). The 16-bit output is the F32 output
     * rounded once, bit for bit. Then the transposed layout's argument checks on live tensors.
     */
    void transposedA() {
        Failures f = new Failures();
        transposedA(f);
        f.throwIfAny();
    }

    /** {@link #transposedA()} and then {@link #alphaBeta()}, their failures reported together. */
    void layoutsAndScales() {
        Failures f = new Failures();
        transposedA(f);
        alphaBeta(f);
        f.throwIfAny();
    }

    private void transposedA(Failures f) {
        for (int[] shape : TRANSPOSED_SHAPES) {
            for (DType in : GemmScenarios.INPUTS) {
                for (GemmLayout layout : GemmLayout.values()) {
                    s.layoutsCase(f, "transposed_a", shape[0], shape[1], shape[2], in, new GemmLayouts(GemmALayout.KM, layout));
                }
            }
        }
        for (DType in : GemmScenarios.INPUTS) {
            s.layoutsCase(f, "transposed_a", RAGGED_K[0], RAGGED_K[1], RAGGED_K[2], in, GemmLayouts.KM_KN);
        }
        misuse(f);
    }

    /** The transposed layout's and the scaling's checks on live tensors, before anything is launched. */
    private void misuse(Failures f) {
        String prefix = "rank " + iris.rank() + ": gemm: ";
        try (SymTensor a = heap.empty(DType.BF16, 64, 200); SymTensor a129 = heap.empty(DType.BF16, 64, 129);
             SymTensor b = heap.empty(DType.BF16, 64, 136); SymTensor c = heap.empty(DType.F32, 200, 136);
             SymTensor c129 = heap.empty(DType.F32, 129, 136)) {
            GemmScenarios.expect(f, prefix + "M = 129 (A (km: K x M)'s columns) is not a multiple of 8",
                    () -> gemm.matmul(a129, b, GemmLayouts.KM_KN, c129, 1f, 0f, stream));
            GemmScenarios.expect(f, prefix + "B (nk: N x K) " + b + " does not match A (km: K x M)",
                    () -> gemm.matmul(a, b, GemmLayouts.KM_NK, c, 1f, 0f, stream));
            GemmScenarios.expect(f, prefix + "alpha = NaN is not finite", () -> gemm.matmul(a, b, GemmLayouts.KM_KN, c, Float.NaN, 0f, stream));
            GemmScenarios.expect(f, prefix + "layouts must not be null", () -> gemm.matmul(a, b, (GemmLayouts) null, c, 1f, 0f, stream));
        }
    }

    // =============================================================================================
    // C = alpha A B + beta C
    // =============================================================================================

    /**
     * Every layout pair x input dtype x output dtype x (alpha, beta) x bias or not: C starts as
     * random values of its dtype in the M x N window (poison where beta is 0, so a kernel that reads
     * C there fails) with poisoned padding (ldc = N + 8, a row beyond M) that must stay poison; the
     * result is checked against {@code alpha (A B) + beta C0 + bias} within {@link
     * GemmErrorBound#scaled}. Without a bias the call takes device matrices, with one symmetric
     * tensors (C then unpadded).
     */
    void alphaBeta() {
        Failures f = new Failures();
        alphaBeta(f);
        f.throwIfAny();
    }

    private void alphaBeta(Failures f) {
        GemmLayouts[] pairs = {GemmLayouts.MK_NK, GemmLayouts.MK_KN, GemmLayouts.KM_NK, GemmLayouts.KM_KN};
        for (int[] shape : SCALED_SHAPES) {
            for (GemmLayouts layouts : pairs) {
                for (DType in : GemmScenarios.INPUTS) {
                    scaledCase(f, "", shape[0], shape[1], shape[2], layouts, in);
                }
            }
        }
        if (gemm.mainloop() != GemmMainloop.HOPPER) {
            return;
        }
        // The swapped tiles apply alpha, beta and the bias in their own store (iris/gemm/swapped.cuh).
        try {
            for (GemmTile tile : GemmTile.values()) {
                if (tile.swapped()) {
                    gemm.forceTile(tile);
                    for (int i = 0; i < SCALED_SHAPES.length; i++) {
                        int[] shape = SCALED_SHAPES[i];
                        scaledCase(f, tile + " ", shape[0], shape[1], shape[2], i % 2 == 0 ? GemmLayouts.MK_NK : GemmLayouts.MK_KN,
                                GemmScenarios.INPUTS[(i + tile.ordinal()) % 2]);
                    }
                }
            }
        } finally {
            gemm.forceTile(null);
        }
    }

    private void scaledCase(Failures f, String tile, int m, int n, int k, GemmLayouts layouts, DType in) {
        long seed = s.seed("alpha_beta" + tile, m, n, k, layouts.a().ordinal(), layouts.b().ordinal(), in.ordinal());
        int aRows = (int) layouts.a().aRows(m, k);
        int aCols = (int) layouts.a().aCols(m, k);
        int bRows = (int) layouts.b().bRows(n, k);
        int bCols = (int) layouts.b().bCols(n, k);
        HostMatrix a = HostMatrix.random(seed, in, aRows, aCols);
        HostMatrix b = HostMatrix.random(seed + 1, in, bRows, bCols);
        HostMatrix biasIn = HostMatrix.random(seed + 2, in, 1, n);
        Reference ref = GemmReference.full(a, layouts.a(), b, layouts.b());
        String shape = tile + m + " x " + n + " x " + k + " " + in + " " + layouts.kernelPart();
        try (SymTensor ta = s.upload(a, aCols, 0, aRows, aCols); SymTensor tb = s.upload(b, bCols, 0, bRows, bCols);
             SymTensor biasSame = s.upload(biasIn, n, 0, n); SymTensor biasF32 = s.upload(biasIn.as(DType.F32), n, 0, n)) {
            for (DType out : new DType[] {DType.F32, in}) {
                HostMatrix c0 = HostMatrix.random(seed + 3 + out.ordinal(), out, m, n);
                for (float[] scale : SCALES) {
                    float alpha = scale[0];
                    float beta = scale[1];
                    for (boolean withBias : new boolean[] {false, true}) {
                        SymTensor bias = withBias ? (out == DType.F32 ? biasF32 : biasSame) : null;
                        String what = shape + " -> " + out + ", alpha " + alpha + ", beta " + beta + (withBias ? " + bias, tensors" : ", padded C");
                        int ldc = withBias ? n : n + PAD;
                        int rows = withBias ? m : m + 1;
                        try (SymTensor c = heap.empty(out, rows, ldc)) {
                            if (beta == 0f) {
                                s.poison(c);
                            } else {
                                c.copyFrom(valuesInPoison(c0, ldc, rows));
                            }
                            if (withBias) {
                                gemm.matmul(ta, tb, layouts, bias, c, alpha, beta, stream);
                            } else {
                                gemm.matmul(DeviceMatrix.of(ta), DeviceMatrix.of(tb), layouts, 0,
                                        new DeviceMatrix(c.deviceAddress(), out, m, n, ldc), alpha, beta, stream);
                            }
                            iris.synchronize();
                            f.add(GemmReference.checkElements(what, GemmScenarios.download(c), out, ldc, rows,
                                    GemmReference.scaledWindow(ref, alpha, beta, c0, withBias ? biasIn.values() : null, out)));
                        }
                    }
                }
            }
        }
    }

    /** A rows x ldc image of C: {@code c0} in its window, every other byte 0xFF (poison). */
    private static ByteBuffer valuesInPoison(HostMatrix c0, int ldc, int rows) {
        DType out = c0.dtype();
        ByteBuffer b = ByteBuffer.allocateDirect(rows * ldc * out.byteSize()).order(ByteOrder.nativeOrder());
        while (b.hasRemaining()) {
            b.put((byte) 0xFF);
        }
        for (int i = 0; i < c0.rows(); i++) {
            b.position(i * ldc * out.byteSize());
            for (int j = 0; j < c0.cols(); j++) {
                GemmReference.put(b, out, c0.at(i, j));
            }
        }
        return b.clear();
    }
}

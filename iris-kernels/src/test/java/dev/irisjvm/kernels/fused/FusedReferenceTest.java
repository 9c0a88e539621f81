package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.fused.FusedReference.Expected;
import dev.irisjvm.kernels.fused.FusedReference.Matrix;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The GPU tests' host reference: products in both layouts, the reduced bound, the element check. */
class FusedReferenceTest {
    @Test
    void productsAgreeWithSingleElementsInBothLayouts() {
        Matrix a = Matrix.random(1, DType.BF16, 5, 24);
        Matrix bNk = Matrix.random(2, DType.BF16, 7, 24);
        float[] t = new float[24 * 7];
        for (int n = 0; n < 7; n++) for (int k = 0; k < 24; k++) t[k * 7 + n] = bNk.at(n, k);
        Matrix bKn = new Matrix(DType.BF16, 24, 7, t);
        float[] bias = Matrix.random(3, DType.BF16, 1, 7).values();
        double[][] nk = FusedReference.products(a, 1, 3, bNk, GemmLayout.NK, bias);
        double[][] kn = FusedReference.products(a, 1, 3, bKn, GemmLayout.KN, bias);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 7; j++) {
                double[] e = FusedReference.element(a, 1 + i, bNk, GemmLayout.NK, j, bias);
                assertEquals(e[0], nk[0][i * 7 + j], 1e-12);
                assertEquals(e[1], nk[1][i * 7 + j], 1e-12);
                assertEquals(e[0], kn[0][i * 7 + j], 1e-12);
            }
        }
    }

    @Test
    void reducedBoundCoversTheRoundingOfTwoRoundedPartials() {
        // Two partials that round, then their sum that rounds again: within the bound.
        DType t = DType.BF16;
        double p0 = 1.00390625 + 0x1p-12;   // not representable in BF16
        double p1 = -0.5 - 0x1p-11;
        float r0 = FusedReference.round(t, (float) p0);
        float r1 = FusedReference.round(t, (float) p1);
        float c = FusedReference.round(t, r0 + r1);
        double bound = FusedReference.reducedBound(t, 1, new double[] {p0, p1}, new double[] {Math.abs(p0), Math.abs(p1)});
        assertTrue(Math.abs(c - (p0 + p1)) <= bound, "|c - ref| " + Math.abs(c - (p0 + p1)) + " > " + bound);
        double four = FusedReference.reducedBound(t, 1, new double[] {p0, p1, p0, p1}, new double[] {1, 1, 1, 1});
        assertTrue(four > bound);
    }

    @Test
    void checkFindsPoisonAndStrayWrites() {
        DType t = DType.BF16;
        Expected e = new Expected(1, 2, new double[] {1, 2}, new double[] {0.01, 0.01});
        Matrix good = new Matrix(t, 1, 2, new float[] {1, 2});
        assertNull(FusedReference.check("ok", good.bytes(4, 2, 0), t, 4, 2, e));  // padding and the extra row are poison
        ByteBuffer unwritten = new Matrix(t, 1, 1, new float[] {1}).bytes(4, 2, 0);
        assertTrue(FusedReference.check("x", unwritten, t, 4, 2, e).contains("(0, 1) = poison (never written)"));
        ByteBuffer stray = good.bytes(4, 2, 0);
        stray.putShort(3 * 2, FusedReference.bits(t, 5f));
        assertTrue(FusedReference.check("x", stray, t, 4, 2, e).contains("(0, 3) outside the 1 x 2 output was written: 5.0"));
    }
}

package dev.irisjvm.kernels.fused;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.fused.FusedReference.Expected;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmReference;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.gemm.GemmReference.Reference;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The GPU tests' host reference: products in both layouts, the reduced bound, the element check. */
class FusedReferenceTest {
    @Test
    void productsAgreeWithSingleElementsInBothLayouts() {
        HostMatrix a = HostMatrix.random(1, DType.BF16, 5, 24);
        HostMatrix bNk = HostMatrix.random(2, DType.BF16, 7, 24);
        float[] t = new float[24 * 7];
        for (int n = 0; n < 7; n++) for (int k = 0; k < 24; k++) t[k * 7 + n] = bNk.at(n, k);
        HostMatrix bKn = new HostMatrix(DType.BF16, 24, 7, t);
        float[] bias = HostMatrix.random(3, DType.BF16, 1, 7).values();
        Reference nk = GemmReference.products(a, bNk, GemmLayout.NK, 1, 3, bias);
        Reference kn = GemmReference.products(a, bKn, GemmLayout.KN, 1, 3, bias);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 7; j++) {
                double[] e = GemmReference.element(a, bNk, GemmLayout.NK, 1 + i, j, bias);
                assertEquals(e[0], nk.sum()[i * 7 + j], 1e-12);
                assertEquals(e[1], nk.absSum()[i * 7 + j], 1e-12);
                assertEquals(e[0], kn.sum()[i * 7 + j], 1e-12);
            }
        }
    }

    @Test
    void reducedBoundCoversTheRoundingOfTwoRoundedPartials() {
        // Two partials that round, then their sum that rounds again: within the bound.
        DType t = DType.BF16;
        double p0 = 1.00390625 + 0x1p-12;   // not representable in BF16
        double p1 = -0.5 - 0x1p-11;
        float r0 = GemmReference.representable(t, (float) p0);
        float r1 = GemmReference.representable(t, (float) p1);
        float c = GemmReference.representable(t, r0 + r1);
        double bound = FusedReference.reducedBound(t, 1, new double[] {p0, p1}, new double[] {Math.abs(p0), Math.abs(p1)});
        assertTrue(Math.abs(c - (p0 + p1)) <= bound, "|c - ref| " + Math.abs(c - (p0 + p1)) + " > " + bound);
        double four = FusedReference.reducedBound(t, 1, new double[] {p0, p1, p0, p1}, new double[] {1, 1, 1, 1});
        assertTrue(four > bound);
    }

    @Test
    void checkFindsPoisonAndStrayWrites() {
        DType t = DType.BF16;
        Expected e = new Expected(1, 2, new double[] {1, 2}, new double[] {0.01, 0.01});
        HostMatrix good = new HostMatrix(t, 1, 2, new float[] {1, 2});
        assertNull(FusedReference.check("ok", FusedReference.bytes(good, 4, 2, 0), t, 4, 2, e));  // padding and the extra row are poison
        ByteBuffer unwritten = FusedReference.bytes(new HostMatrix(t, 1, 1, new float[] {1}), 4, 2, 0);
        assertTrue(FusedReference.check("x", unwritten, t, 4, 2, e).contains("(0, 1) = poison (never written)"));
        ByteBuffer stray = FusedReference.bytes(good, 4, 2, 0);
        stray.putShort(3 * 2, (short) GemmReference.roundedBits(t, 5f));
        assertTrue(FusedReference.check("x", stray, t, 4, 2, e).contains("(0, 3) outside the 1 x 2 output was written: 5.0"));
    }
}

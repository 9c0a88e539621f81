package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.kernels.moe.MoeExpertReference.LayerElement;
import dev.irisjvm.kernels.moe.MoeExpertReference.Row;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The expert layer's host reference and its bound: a worked row, and the bound against the layer
 * computed the way the GPU does (f32 sums rounded to bf16, then combine's f32 fused multiply-adds
 * rounded to bf16), which must lie within it and not far inside it.
 */
class MoeExpertReferenceTest {
    @Test
    void aRowIsTheTokenTimesEachWeightRow() {
        float[] x = {9, 1, 2, 3};  // the token row starts at 1
        float[] w = {0, 0, 0, 1, -1, 1, 2, 0, 0.5f};  // 3 x 3; the expert's rows start at 1
        Row r = MoeExpertReference.row(x, 1, w, 1, 2, 3);
        assertArrayEquals(new double[] {1 - 2 + 3, 2 + 1.5}, r.y());
        assertArrayEquals(new double[] {1 + 2 + 3, 2 + 1.5}, r.abs());
    }

    @Test
    void theLayerAsTheGpuComputesItLiesWithinTheBound() {
        SplittableRandom rnd = new SplittableRandom(7);
        int k = 1024, topK = 8;
        double worstRatio = 0;
        for (int trial = 0; trial < 2000; trial++) {
            LayerElement e = new LayerElement();
            float acc = 0;
            for (int route = 0; route < topK; route++) {
                float a = (float) rnd.nextDouble();
                float[] x = new float[k];
                float[] w = new float[k];
                for (int h = 0; h < k; h++) {
                    x[h] = bf16((float) (rnd.nextDouble() * 4 - 2));
                    w[h] = bf16((float) (rnd.nextDouble() * 2 - 1));
                }
                Row exact = MoeExpertReference.row(x, 0, w, 0, 1, k);
                float sum = 0;
                for (int h = 0; h < k; h++) sum += x[h] * w[h];  // products are exact in f32
                acc = Math.fma(a, bf16(sum), acc);
                e.add(a, exact.y()[0], exact.abs()[0], k);
            }
            double out = bf16(acc);
            double bound = e.bound(topK);
            assertTrue(Math.abs(out - e.ref()) <= bound, "trial " + trial + ": " + out + " vs " + e.ref() + " +- " + bound);
            worstRatio = Math.max(worstRatio, Math.abs(out - e.ref()) / bound);
        }
        assertTrue(worstRatio > 0.01, "the bound is so loose that no error comes near it: worst error / bound " + worstRatio);
    }

    private static float bf16(float v) {
        return HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(v));
    }
}

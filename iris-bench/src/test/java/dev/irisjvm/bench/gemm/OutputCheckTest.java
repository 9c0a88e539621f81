package dev.irisjvm.bench.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The sweep's output check: one-ulp differences pass, lost work and unwritten elements do not. */
class OutputCheckTest {
    private static ByteBuffer bf16(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 2).order(ByteOrder.nativeOrder());
        for (float x : v) b.putShort(HalfFloats.floatToBf16(x));
        return b.flip();
    }

    @Test
    void judgesRelativeFrobeniusDifference() {
        Random r = new Random(3);
        int n = 10_000;
        float[] ref = new float[n];
        float[] near = new float[n];
        float[] far = new float[n];
        for (int i = 0; i < n; i++) {
            ref[i] = (float) r.nextGaussian() * 40;
            near[i] = i % 3 == 0 ? ref[i] * (1 + 0x1p-8f) : ref[i];   // a rounding step apart
            far[i] = ref[i] * 1.05f;   // like a lost k-block
        }
        assertEquals("ok", OutputCheck.compare(bf16(ref), bf16(ref), DType.BF16, n, 4096));
        assertEquals("ok", OutputCheck.compare(bf16(near), bf16(ref), DType.BF16, n, 4096));
        String bad = OutputCheck.compare(bf16(far), bf16(ref), DType.BF16, n, 4096);
        assertTrue(bad.startsWith("relative difference to cuBLAS"), bad);
        float[] unwritten = ref.clone();
        unwritten[17] = Float.NaN;
        assertEquals("1 of 10000 elements are not finite (unwritten?), first at index 17",
                OutputCheck.compare(bf16(unwritten), bf16(ref), DType.BF16, n, 4096));
    }

    @Test
    void tolerance() {
        assertEquals(2 * 0x1p-8 + 4096 * 0x1p-23, OutputCheck.tolerance(DType.BF16, 4096));
        assertTrue(OutputCheck.tolerance(DType.BF16, 36864) < 0.02, "a lost block of 64 of 36864 (about 4%) stays visible");
    }
}

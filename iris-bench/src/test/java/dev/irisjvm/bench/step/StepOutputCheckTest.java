package dev.irisjvm.bench.step;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StepOutputCheckTest {

    private static ByteBuffer bf16(float... v) {
        ByteBuffer b = ByteBuffer.allocate(2 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) b.putShort((short) (Float.floatToRawIntBits(x) >>> 16));
        return b.flip();
    }

    private static ByteBuffer f32(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) b.putFloat(x);
        return b.flip();
    }

    @Test
    void roundingDifferencesPassAndWrongValuesDoNot() {
        Random r = new Random(25);
        float[] ref = new float[1000];
        float[] near = new float[1000];
        for (int i = 0; i < ref.length; i++) {
            ref[i] = (float) r.nextGaussian();
            near[i] = ref[i] * (1 + (r.nextBoolean() ? 1 : -1) / 256f);  // one BF16 rounding the other way
        }
        assertNull(StepOutputCheck.compare("dW1", DType.F32, f32(near), f32(ref)));
        float[] wrong = near.clone();
        wrong[17] = 0;  // a missing contribution: off by the value itself
        String p = StepOutputCheck.compare("dW1", DType.F32, f32(wrong), f32(ref));
        assertTrue(p != null && p.startsWith("dW1: element 17 is 0.00000, the baseline's "), p);
    }

    @Test
    void poisonAndShapeAreNamed() {
        assertEquals("y: element 1 is NaN (baseline 2.0)", StepOutputCheck.compare("y", DType.BF16, bf16(1, Float.NaN), bf16(1, 2)));
        assertEquals("dX: 2 bytes against the baseline's 4", StepOutputCheck.compare("dX", DType.BF16, bf16(1), bf16(1, 2)));
        assertEquals("y: the baseline is all zeros; nothing to compare", StepOutputCheck.compare("y", DType.BF16, bf16(0, 0), bf16(0, 0)));
        assertEquals("y: the baseline's element 0 is Infinity",
                StepOutputCheck.compare("y", DType.BF16, bf16(1), bf16(Float.POSITIVE_INFINITY)));
    }

    @Test
    void everyTensorIsComparedAndEachProblemReported() {
        ByteBuffer[] ref = {bf16(1, 2), bf16(3, 4), f32(5, 6), f32(7, 8)};
        ByteBuffer[] same = {bf16(1, 2), bf16(3, 4), f32(5, 6), f32(7, 8)};
        assertEquals("ok", StepOutputCheck.compare(same, ref));
        ByteBuffer[] bad = {bf16(1, 2), bf16(3, Float.NaN), f32(5, 6), f32(7, Float.NaN)};
        assertEquals("dX: element 1 is NaN (baseline 4.0); dW2: element 1 is NaN (baseline 8.0)", StepOutputCheck.compare(bad, ref));
    }
}

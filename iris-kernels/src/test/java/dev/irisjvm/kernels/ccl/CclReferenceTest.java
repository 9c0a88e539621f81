package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.kernels.ccl.CclReference.Accumulator;
import dev.irisjvm.kernels.ccl.CclReference.Rounding;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The reference and its bounds: what the kernels compute (float accumulation in rank order, one
 * rounding; or rounding at every step) always passes, a result one unit in the last place off
 * where nothing may round fails, and NaN (the poison) never passes.
 */
class CclReferenceTest {
    private static float round(float v, DType t) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(v));
            case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16(v));
            default -> v;
        };
    }

    /** inputs[p][i]: normal values rounded to t. */
    private static float[][] inputs(int world, int n, DType t, long seed) {
        Random r = new Random(seed);
        float[][] x = new float[world][n];
        for (int p = 0; p < world; p++) {
            for (int i = 0; i < n; i++) x[p][i] = round((float) (r.nextGaussian() * (i % 7 == 0 ? 1e-3 : 3)), t);
        }
        return x;
    }

    /** The once-rounding kernels: float accumulation in rank order, scaled by 1/W for AVG, one rounding. */
    private static float[] once(float[][] x, ReduceOp op, DType t) {
        int world = x.length;
        float[] out = new float[x[0].length];
        for (int i = 0; i < out.length; i++) {
            float acc = x[0][i];
            for (int p = 1; p < world; p++) {
                acc = switch (op) {
                    case SUM, AVG -> acc + x[p][i];
                    case MAX -> Math.max(acc, x[p][i]);
                    case MIN -> Math.min(acc, x[p][i]);
                };
            }
            if (op == ReduceOp.AVG) acc *= 1.0f / world;
            out[i] = round(acc, t);
        }
        return out;
    }

    /** The ring's and the atomic's way: every partial result rounded to t, in some rotated order. */
    private static float[] everyStep(float[][] x, ReduceOp op, DType t) {
        int world = x.length;
        float[] out = new float[x[0].length];
        for (int i = 0; i < out.length; i++) {
            int start = i % world;
            float acc = x[start][i];
            for (int k = 1; k < world; k++) acc = round(acc + x[(start + k) % world][i], t);
            if (op == ReduceOp.AVG) acc = round(acc * (1.0f / world), t);
            out[i] = acc;
        }
        return out;
    }

    private static Accumulator accumulate(float[][] x, ReduceOp op) {
        Accumulator a = new Accumulator(op, x[0].length);
        for (float[] xp : x) a.add(xp);
        return a;
    }

    @Test
    void whatTheKernelsComputePasses() {
        for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
            for (int world = 2; world <= 8; world++) {
                float[][] x = inputs(world, 20_000, t, 31L * world + t.ordinal());
                for (ReduceOp op : ReduceOp.values()) {
                    Accumulator a = accumulate(x, op);
                    assertNull(CclReference.check("once", once(x, op, t), a, op, Rounding.ONCE, t), t + " " + op + " W=" + world);
                    if (op == ReduceOp.SUM || op == ReduceOp.AVG) {
                        assertNull(CclReference.check("every step", everyStep(x, op, t), a, op, Rounding.EVERY_STEP, t),
                                t + " " + op + " W=" + world);
                        // An NCCL that rounds at every step stays within our bound plus its own (and on two
                        // ranks gives the same bits for SUM).
                        assertNull(CclReference.checkVsNccl("vs", once(x, op, t), everyStep(x, op, t), a, op, Rounding.ONCE, t),
                                t + " " + op + " W=" + world);
                    }
                }
            }
        }
    }

    @Test
    void anNcclResultIsHeldToNcclsBound() {
        for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
            for (int world = 2; world <= 8; world++) {
                float[][] x = inputs(world, 5_000, t, 17L * world + t.ordinal());
                for (ReduceOp op : ReduceOp.values()) {
                    Accumulator a = accumulate(x, op);
                    // Window-registered NCCL and plain NCCL may each round once or at every step.
                    float[] window = op == ReduceOp.SUM || op == ReduceOp.AVG ? everyStep(x, op, t) : once(x, op, t);
                    float[] plain = once(x, op, t);
                    assertNull(CclReference.checkNccl("window", window, a, op, t), t + " " + op + " W=" + world);
                    if (!CclReference.exactVsNccl(op, world)) {
                        assertNull(CclReference.checkNcclVsNccl("window", window, plain, a, op, t), t + " " + op + " W=" + world);
                    }
                    assertNull(CclReference.checkNcclVsNccl("same", plain, plain.clone(), a, op, t), t + " " + op + " W=" + world);
                }
            }
        }
        float[][] x = inputs(2, 1000, DType.BF16, 11);
        Accumulator a = accumulate(x, ReduceOp.SUM);
        float[] got = once(x, ReduceOp.SUM, DType.BF16);
        float[] off = got.clone();
        off[9] = off[9] * 1.5f + 1;
        assertNotNull(CclReference.checkNccl("off", off, a, ReduceOp.SUM, DType.BF16));
        off = got.clone();
        off[9] = Math.nextUp(off[9]);
        assertNotNull(CclReference.checkNcclVsNccl("one ulp on two ranks", off, got, a, ReduceOp.SUM, DType.BF16));
        off[9] = Float.NaN;
        assertNotNull(CclReference.checkNccl("nan", off, a, ReduceOp.SUM, DType.BF16));
    }

    @Test
    void aWrongResultFails() {
        float[][] x = inputs(2, 1000, DType.BF16, 7);
        for (ReduceOp op : ReduceOp.values()) {
            Accumulator a = accumulate(x, op);
            float[] got = once(x, op, DType.BF16);
            int i = 17;
            got[i] = Math.nextUp(Math.abs(got[i]) * 1.02f) * Math.signum(got[i] == 0 ? 1 : got[i]);  // 2% off
            assertNotNull(CclReference.check("off", got, a, op, Rounding.ONCE, DType.BF16), op.toString());
            got[i] = Float.NaN;
            String m = CclReference.check("nan", got, a, op, Rounding.EVERY_STEP, DType.BF16);
            assertNotNull(m, op.toString());
            assertTrue(m.contains("NaN (unwritten?)"), m);
        }
    }

    @Test
    void maxAndMinAreExact() {
        assertEquals(0, CclReference.bound(ReduceOp.MAX, Rounding.EVERY_STEP, DType.BF16, 8, 3, 10));
        assertEquals(0, CclReference.ncclBound(ReduceOp.MIN, DType.F16, 8, 3, 10));
        float[][] x = inputs(3, 100, DType.F16, 3);
        Accumulator a = accumulate(x, ReduceOp.MAX);
        float[] got = once(x, ReduceOp.MAX, DType.F16);
        got[5] = Math.nextUp(got[5]);
        assertNotNull(CclReference.check("max", got, a, ReduceOp.MAX, Rounding.ONCE, DType.F16));
    }

    @Test
    void whereNcclMustAgreeBitForBit() {
        assertTrue(CclReference.exactVsNccl(ReduceOp.SUM, 2));
        assertFalse(CclReference.exactVsNccl(ReduceOp.SUM, 3));
        assertFalse(CclReference.exactVsNccl(ReduceOp.AVG, 2));
        assertTrue(CclReference.exactVsNccl(ReduceOp.MAX, 8));
        assertTrue(CclReference.exactVsNccl(ReduceOp.MIN, 5));
        float[][] x = inputs(2, 100, DType.BF16, 9);
        Accumulator a = accumulate(x, ReduceOp.SUM);
        float[] ours = once(x, ReduceOp.SUM, DType.BF16);
        assertNull(CclReference.checkVsNccl("same", ours, ours.clone(), a, ReduceOp.SUM, Rounding.ONCE, DType.BF16));
        float[] theirs = ours.clone();
        theirs[3] = Math.nextUp(theirs[3]);
        assertNotNull(CclReference.checkVsNccl("one ulp", ours, theirs, a, ReduceOp.SUM, Rounding.ONCE, DType.BF16));
    }

    @Test
    void twoRankBf16SumRoundsLikeOneCorrectRounding() {
        // The claim behind bit-exactness with NCCL on two ranks: float(x + y) rounded to bf16 is the
        // correctly rounded sum of two bf16 values, whatever way the hardware adds them.
        Random r = new Random(1);
        for (int k = 0; k < 200_000; k++) {
            float x = round((float) (r.nextGaussian() * Math.pow(2, r.nextInt(40) - 20)), DType.BF16);
            float y = round((float) (r.nextGaussian() * Math.pow(2, r.nextInt(40) - 20)), DType.BF16);
            double exact = (double) x + y;
            float viaFloat = round(x + y, DType.BF16);
            float correct = round((float) exact, DType.BF16);  // (float) exact may round, but not across a bf16 midpoint
            assertEquals(Float.floatToRawIntBits(correct), Float.floatToRawIntBits(viaFloat), x + " + " + y);
        }
    }

    @Test
    void accumulatorAddsSlices() {
        Accumulator a = new Accumulator(ReduceOp.AVG, 2);
        a.add(new float[] {9, 1, 2, 9}, 1);
        a.add(new float[] {9, 3, -6, 9}, 1);
        assertEquals(2, a.added());
        assertEquals(2.0, a.exact(0));
        assertEquals(-2.0, a.exact(1));
        assertEquals(8.0, a.absSum(1));
    }
}

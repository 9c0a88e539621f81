package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class HalfFloatsTest {
    /** Every f16 bit pattern survives f16 -> float -> f16 (NaNs stay NaN). */
    @Test
    void everyHalfRoundTrips() {
        for (int bits = 0; bits < 0x10000; bits++) {
            float f = HalfFloats.f16ToFloat((short) bits);
            short back = HalfFloats.floatToF16(f);
            if (Float.isNaN(f)) {
                assertTrue(Float.isNaN(HalfFloats.f16ToFloat(back)));
            } else {
                assertEquals((short) bits, back, "f16 0x" + Integer.toHexString(bits));
            }
        }
    }

    /** Rounding to f16 picks the nearest representable value, ties to even, against an exact reference. */
    @Test
    void floatToHalfRoundsToNearestEven() {
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 200_000; i++) {
            float f = Float.intBitsToFloat(random.nextInt());
            if (Float.isNaN(f) || Float.isInfinite(f) || Math.abs(f) > 65504f) {
                continue;
            }
            float got = HalfFloats.f16ToFloat(HalfFloats.floatToF16(f));
            assertEquals(nearestEvenHalf(f), got, "rounding " + f);
        }
    }

    private static float nearestEvenHalf(float f) {
        BigDecimal x = new BigDecimal(f);
        float best = 0;
        BigDecimal bestDiff = null;
        short bestBits = 0;
        // The two candidates: truncation and its successor in f16.
        short t = (short) (HalfFloats.floatToF16(f));
        for (int d = -1; d <= 1; d++) {
            short c = (short) ((t & 0xffff) + d);
            float cf = HalfFloats.f16ToFloat(c);
            if (Float.isNaN(cf) || Float.isInfinite(cf) || (c & 0x7fff) == 0x7c00) continue;
            if (Math.signum(cf) != Math.signum(f) && cf != 0) continue;
            BigDecimal diff = new BigDecimal(cf).subtract(x).abs();
            int cmp = bestDiff == null ? -1 : diff.compareTo(bestDiff);
            if (cmp < 0 || (cmp == 0 && (c & 1) == 0 && (bestBits & 1) == 1)) {
                best = cf;
                bestDiff = diff;
                bestBits = c;
            }
        }
        return best;
    }

    @Test
    void bf16MatchesKnownValuesAndTiesToEven() {
        assertEquals(1.0f, HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(1.0f)));
        assertEquals((short) 0x3f80, HalfFloats.floatToBf16(1.0f));
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to even -> 1.
        assertEquals(1.0f, HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(1.0f + 0x1p-8f)));
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: ties to even -> 1 + 2^-6.
        assertEquals(1.0f + 0x1p-6f, HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(1.0f + 3 * 0x1p-8f)));
        assertTrue(Float.isNaN(HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(Float.NaN))));
        for (int bits = 0; bits < 0x10000; bits++) {
            float f = HalfFloats.bf16ToFloat((short) bits);
            if (!Float.isNaN(f)) {
                assertEquals((short) bits, HalfFloats.floatToBf16(f), "bf16 0x" + Integer.toHexString(bits));
            }
        }
    }

    @Test
    void halfSpecialValues() {
        assertEquals((short) 0x7c00, HalfFloats.floatToF16(65520f));
        assertEquals((short) 0x7bff, HalfFloats.floatToF16(65504f));
        assertEquals((short) 0x0001, HalfFloats.floatToF16(0x1p-24f));
        assertEquals((short) 0x0000, HalfFloats.floatToF16(0x1p-26f));
        assertEquals((short) 0x8000, HalfFloats.floatToF16(-0.0f));
    }
}

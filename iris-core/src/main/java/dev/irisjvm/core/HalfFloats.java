package dev.irisjvm.core;

/**
 * IEEE half (f16) and bfloat16 conversions for Java 17, which has no float16 type. Rounding is to
 * nearest, ties to even, matching the GPU's {@code __float2half_rn} and {@code __float2bfloat16}.
 */
public final class HalfFloats {
    private HalfFloats() {}

    public static float bf16ToFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    public static short floatToBf16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if (Float.isNaN(value)) {
            return (short) ((bits >>> 16) | 0x0040);  // keep it a (quiet) NaN
        }
        int rounding = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    public static float f16ToFloat(short half) {
        int h = half & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exponent = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        if (exponent == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
        }
        if (exponent == 0) {
            float magnitude = mantissa * 0x1p-24f;  // subnormal: mantissa * 2^-24
            return sign == 0 ? magnitude : -magnitude;
        }
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }

    public static short floatToF16(float value) {
        int bits = Float.floatToRawIntBits(value);
        int sign = (bits >>> 16) & 0x8000;
        if (Float.isNaN(value)) {
            return (short) (sign | 0x7e00);
        }
        float abs = Math.abs(value);
        if (abs >= 65520f) {  // rounds to infinity
            return (short) (sign | 0x7c00);
        }
        if (abs < 0x1p-14f) {  // subnormal or zero: scale so that one unit is 2^-24, round to even
            int scaled = (int) Math.rint(abs * 0x1p24f);
            return (short) (sign | scaled);
        }
        int exponent = ((bits >>> 23) & 0xff) - 112;
        int mantissa = bits & 0x7fffff;
        int half = (exponent << 10) | (mantissa >>> 13);
        int remainder = mantissa & 0x1fff;
        if (remainder > 0x1000 || (remainder == 0x1000 && (half & 1) == 1)) {
            half++;  // a carry into the exponent is the correct rounding too
        }
        return (short) (sign | half);
    }
}

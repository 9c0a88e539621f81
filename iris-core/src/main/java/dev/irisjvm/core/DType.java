package dev.irisjvm.core;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.nio.ByteBuffer;

/**
 * Element types of symmetric tensors. The codes are the kernels' ({@code iris_dtype}, iris/abi/core.h).
 * Values cross between Java and the device as doubles where a conversion is needed; 16-bit floats
 * round to nearest even, as the GPU's conversions do.
 */
public enum DType {
    F32(KernelAbi.IRIS_DTYPE_F32, 4, true),
    F16(KernelAbi.IRIS_DTYPE_F16, 2, true),
    BF16(KernelAbi.IRIS_DTYPE_BF16, 2, true),
    F64(KernelAbi.IRIS_DTYPE_F64, 8, true),
    I32(KernelAbi.IRIS_DTYPE_I32, 4, false),
    I64(KernelAbi.IRIS_DTYPE_I64, 8, false),
    U8(KernelAbi.IRIS_DTYPE_U8, 1, false);

    private final int code;
    private final int byteSize;
    private final boolean floating;

    DType(int code, int byteSize, boolean floating) {
        this.code = code;
        this.byteSize = byteSize;
        this.floating = floating;
    }

    /** The code the kernels use for this type. */
    public int code() {
        return code;
    }

    public int byteSize() {
        return byteSize;
    }

    public boolean isFloatingPoint() {
        return floating;
    }

    /** Unit roundoff u of a floating-point type: {@code |round(x) - x| <= u |x|} (2^-24 for F32, 2^-8 for BF16). */
    public double unitRoundoff() {
        return switch (this) {
            case F32 -> 0x1p-24;
            case F16 -> 0x1p-11;
            case BF16 -> 0x1p-8;
            case F64 -> 0x1p-53;
            default -> throw new IllegalArgumentException(this + " is not a floating-point type");
        };
    }

    /** Half the smallest subnormal: the absolute rounding error near zero, where u |x| does not hold. */
    public double halfSmallestSubnormal() {
        return switch (this) {
            case F32 -> 0x1p-150;
            case F16 -> 0x1p-25;
            case BF16 -> 0x1p-134;
            case F64 -> Double.MIN_VALUE;  // half of it is not a double: the smallest subnormal bounds it
            default -> throw new IllegalArgumentException(this + " is not a floating-point type");
        };
    }

    /** Writes {@code value} as this type at the buffer's position and advances it. */
    void put(ByteBuffer buffer, double value) {
        switch (this) {
            case F32 -> buffer.putFloat((float) value);
            case F16 -> buffer.putShort(HalfFloats.floatToF16((float) value));
            case BF16 -> buffer.putShort(HalfFloats.floatToBf16((float) value));
            case F64 -> buffer.putDouble(value);
            case I32 -> buffer.putInt((int) value);
            case I64 -> buffer.putLong((long) value);
            case U8 -> buffer.put((byte) (int) value);
        }
    }

    /** Reads one value of this type at the buffer's position and advances it. */
    double get(ByteBuffer buffer) {
        return switch (this) {
            case F32 -> buffer.getFloat();
            case F16 -> HalfFloats.f16ToFloat(buffer.getShort());
            case BF16 -> HalfFloats.bf16ToFloat(buffer.getShort());
            case F64 -> buffer.getDouble();
            case I32 -> buffer.getInt();
            case I64 -> buffer.getLong();
            case U8 -> buffer.get() & 0xff;
        };
    }
}

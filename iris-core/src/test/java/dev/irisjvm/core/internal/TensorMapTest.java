package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisNativeException;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.BytePointer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Tensor-map arguments: every rule is checked in Java before anything native runs (so these run
 * without a GPU), and again in libiris (called directly below). With a GPU the encode succeeds;
 * without one it fails naming the driver query, after the native checks passed.
 */
class TensorMapTest {
    private static final long BASE = 0x7f00_0000_0000L;

    /** A bf16 M x K = 4096 x 4096 matrix with the GEMM's A box: 128 rows x 64 elements, 128-byte swizzle. */
    private static void valid() {
        TensorMap.check(DType.BF16, BASE, 4096, 4096, 8192, 64, 128, 128);
    }

    private static void rejects(String expected, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith("rank ?: TensorMap.tiled2d: "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' should say '" + expected + "'");
    }

    @Test
    void theGemmShapesPass() {
        valid();
        TensorMap.check(DType.F16, BASE, 4096, 8192, 8192, 64, 256, 128);  // B, N x K
        TensorMap.check(DType.BF16, BASE, 8192, 4096, 16384, 64, 64, 128);  // B, K x N
        TensorMap.check(DType.F32, BASE, 8, 1, 32, 4, 1, 0);               // the smallest legal f32 map
        TensorMap.check(DType.BF16, BASE, 1L << 32, 1, 1L << 33, 8, 1, 0);  // the largest side
    }

    @Test
    void elementTypes() {
        rejects("elementType must not be null", () -> TensorMap.check(null, BASE, 64, 64, 128, 64, 64, 128));
        rejects("elementType F64 is not supported; expected BF16, F16 or F32",
                () -> TensorMap.check(DType.F64, BASE, 64, 64, 512, 8, 8, 0));
        rejects("elementType I32", () -> TensorMap.check(DType.I32, BASE, 64, 64, 256, 8, 8, 0));
    }

    @Test
    void theCodesAreDTypeCodes() {
        assertEquals(DType.F32.code(), IrisRuntime.IRIS_TMA_F32);
        assertEquals(DType.F16.code(), IrisRuntime.IRIS_TMA_F16);
        assertEquals(DType.BF16.code(), IrisRuntime.IRIS_TMA_BF16);
        assertEquals(128, TensorMap.BYTES);
    }

    @Test
    void baseAddress() {
        rejects("base is 0 (NULL)", () -> TensorMap.check(DType.BF16, 0, 64, 64, 128, 64, 64, 128));
        rejects("base 0x7f0000000008 is not 16-byte aligned",
                () -> TensorMap.check(DType.BF16, BASE + 8, 64, 64, 128, 64, 64, 128));
    }

    @Test
    void dimensions() {
        rejects("inner 0 is outside [1, 2^32]", () -> TensorMap.check(DType.BF16, BASE, 0, 64, 128, 64, 64, 128));
        rejects("inner 4294967297 is outside", () -> TensorMap.check(DType.BF16, BASE, (1L << 32) + 1, 1, 1L << 34, 64, 1, 128));
        rejects("outer 0 is outside [1, 2^32]", () -> TensorMap.check(DType.BF16, BASE, 64, 0, 128, 64, 64, 128));
        rejects("outer -1 is outside", () -> TensorMap.check(DType.BF16, BASE, 64, -1, 128, 64, 64, 128));
    }

    @Test
    void strides() {
        rejects("outerStrideBytes 130 is not a multiple of 16", () -> TensorMap.check(DType.BF16, BASE, 65, 64, 130, 64, 64, 128));
        rejects("outerStrideBytes 112 is less than a row (inner 64 x 2 bytes)",
                () -> TensorMap.check(DType.BF16, BASE, 64, 64, 112, 64, 64, 128));
        rejects("outerStrideBytes 1099511627776 is not below 2^40",
                () -> TensorMap.check(DType.BF16, BASE, 64, 2, 1L << 40, 64, 2, 128));
    }

    @Test
    void boxes() {
        rejects("boxInner 0 is outside [1, 256]", () -> TensorMap.check(DType.BF16, BASE, 64, 64, 128, 0, 64, 128));
        rejects("boxInner 264 is outside [1, 256]", () -> TensorMap.check(DType.BF16, BASE, 512, 64, 1024, 264, 64, 0));
        rejects("boxOuter 257 is outside [1, 256]", () -> TensorMap.check(DType.BF16, BASE, 64, 512, 128, 64, 257, 128));
        rejects("boxOuter 0 is outside", () -> TensorMap.check(DType.BF16, BASE, 64, 512, 128, 64, 0, 128));
        rejects("boxInner 4 x 2 bytes is not a multiple of 16 bytes", () -> TensorMap.check(DType.BF16, BASE, 64, 64, 128, 4, 64, 0));
        rejects("boxInner 2 x 4 bytes is not a multiple of 16 bytes", () -> TensorMap.check(DType.F32, BASE, 64, 64, 256, 2, 64, 0));
    }

    @Test
    void swizzles() {
        rejects("swizzleBytes 16 is not 0, 32, 64 or 128", () -> TensorMap.check(DType.BF16, BASE, 64, 64, 128, 8, 64, 16));
        rejects("boxInner 128 x 2 bytes exceeds the 128-byte swizzle span",
                () -> TensorMap.check(DType.BF16, BASE, 128, 64, 256, 128, 64, 128));
        rejects("boxInner 32 x 2 bytes exceeds the 32-byte swizzle span",
                () -> TensorMap.check(DType.BF16, BASE, 64, 64, 128, 32, 64, 32));
        rejects("boxInner 32 x 4 bytes exceeds the 64-byte swizzle span",
                () -> TensorMap.check(DType.F32, BASE, 64, 64, 256, 32, 64, 64));
        TensorMap.check(DType.BF16, BASE, 256, 64, 512, 256, 64, 0);  // unswizzled boxes may be wider than 128 bytes
        TensorMap.check(DType.BF16, BASE, 64, 64, 128, 16, 64, 32);
    }

    @Test
    void tiled2dChecksBeforeAnythingNative() {
        rejects("base 0x7f0000000004 is not 16-byte aligned",
                () -> TensorMap.tiled2d(DType.BF16, BASE + 4, 64, 64, 128, 64, 64, 128));
    }

    /** libiris checks the same rules: its messages name the C argument. */
    @Test
    void theNativeSideChecksToo() {
        if (!NativeLibrary.isAvailable() || NativeLibrary.platform() != Platform.CUDA) {
            return;  // on HIP every call is IRIS_ERROR_UNSUPPORTED (tested below)
        }
        byte[] d = new byte[TensorMap.BYTES];
        nativeRejects("base 0x7f0000000008 is not 16-byte aligned", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_BF16,
                BASE + 8, 64, 64, 128, 64, 64, 128));
        nativeRejects("element_type 7 is not", IrisRuntime.iris_tensor_map_2d(d, 7, BASE, 64, 64, 128, 64, 64, 128));
        nativeRejects("outer_stride_bytes 120 is not a multiple of 16", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_BF16,
                BASE, 60, 64, 120, 64, 64, 128));
        nativeRejects("outer_stride_bytes 112 is less than a row", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_BF16,
                BASE, 64, 64, 112, 64, 64, 128));
        nativeRejects("box_outer 300 is outside [1, 256]", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_BF16,
                BASE, 64, 512, 128, 64, 300, 128));
        nativeRejects("box_inner 128 x 2 bytes exceeds the 128-byte swizzle span", IrisRuntime.iris_tensor_map_2d(d,
                IrisRuntime.IRIS_TMA_BF16, BASE, 128, 64, 256, 128, 64, 128));
        nativeRejects("swizzle_bytes 48 is not 0, 32, 64 or 128", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_BF16,
                BASE, 64, 64, 128, 8, 64, 48));
        nativeRejects("inner_elements 0 is outside", IrisRuntime.iris_tensor_map_2d(d, IrisRuntime.IRIS_TMA_F32,
                BASE, 0, 64, 128, 8, 64, 0));
    }

    private static void nativeRejects(String expected, int status) {
        assertEquals(IrisRuntime.IRIS_ERROR_INVALID_ARGUMENT, status, "status");
        String message = IrisRuntime.iris_last_error().getString();
        assertTrue(message.startsWith("iris_tensor_map_2d: "), message);
        assertTrue(message.contains(expected), () -> "'" + message + "' should say '" + expected + "'");
    }

    /**
     * Valid arguments: with a GPU the driver encodes the map (the 128 bytes are not all zero); without
     * a driver the failure names the entry-point query; on HIP it is "not available on this platform".
     * The encode reads no memory, so a made-up address serves.
     */
    @Test
    void encodesOrSaysWhyNot() {
        if (!NativeLibrary.isAvailable()) {
            return;  // NativeLibraryTest reports why
        }
        try {
            TensorMap m = TensorMap.tiled2d(DType.BF16, BASE, 4096, 4096, 8192, 64, 128, 128);
            byte[] b = m.bytes();
            boolean any = false;
            for (byte x : b) any |= x != 0;
            assertTrue(any, "an encoded descriptor is not all zeros");
            assertEquals(TensorMap.BYTES, b.length);
            assertEquals("TensorMap(BF16 4096 x 4096 at 0x7f0000000000, rows 8192 bytes apart, box 128 x 64, swizzle 128)",
                    m.toString());
            try (KernelArgs args = new KernelArgs()) {
                args.putInt(1);
                m.putInto(args).putLong(2);
                assertEquals(64, args.offsets().get(1), "the descriptor is 64-byte aligned");
                assertEquals(192, args.offsets().get(2));
            }
            try (BytePointer member = new BytePointer(TensorMap.BYTES)) {
                m.copyTo(member);
                byte[] copied = new byte[TensorMap.BYTES];
                member.get(copied);
                assertArrayEquals(b, copied, "copyTo writes the descriptor's bytes");
            }
        } catch (IrisPlatformException e) {
            assertEquals(Platform.HIP, NativeLibrary.platform(), e.getMessage());
            assertTrue(e.getMessage().contains("not available on this platform (HIP): TMA tensor maps needs"), e.getMessage());
        } catch (IrisNativeException e) {
            assertTrue(Gpu.probe().deviceCount() == 0, "with a GPU the encode must succeed: " + e.getMessage());
            assertTrue(e.getMessage().contains("iris_tensor_map_2d(BF16 4096 x 4096 at 0x7f0000000000"), e.getMessage());
            assertTrue(e.getMessage().contains("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\""), e.getMessage());
        }
    }
}

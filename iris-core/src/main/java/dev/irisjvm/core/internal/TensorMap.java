package dev.irisjvm.core.internal;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.util.Locale;
import org.bytedeco.javacpp.BytePointer;

/**
 * A TMA descriptor ({@code CUtensorMap}, 128 bytes): how Hopper's tensor memory accelerator
 * copies boxes of a row-major matrix in global memory into shared memory. Kernels take it by value,
 * 64-byte aligned, in the parameter space: {@link #copyTo} copies it into a member of an argument
 * struct (iris/abi/tma.h), {@link #putInto(KernelArgs)} packs it as a parameter of its own. Building
 * one is host work only (no GPU work is enqueued, nothing is allocated), so it may happen while a
 * stream is being captured into a graph; it is still worth caching, as the GEMM does. The driver
 * encodes for the calling thread's current device (on a thread that has not used the GPU yet, that
 * device's primary context is initialized first).
 *
 * <pre>{@code
 * // A: M x K bf16, row-major, lda elements per row; boxes of 128 rows x 64 elements, 128-byte swizzle
 * TensorMap a = TensorMap.tiled2d(DType.BF16, aAddress, k, m, lda * 2L, 64, 128, 128);
 * args.clear();
 * a.putInto(args);                 // the kernel's first parameter
 * args.putLong(c).putInt(m);
 * kernel.launch(shape, stream, args);
 * }</pre>
 *
 * <p>The map is encoded with no interleave, element strides of 1, L2 promotion of 256 bytes and no
 * out-of-bounds fill: elements outside the matrix read as zeros, so boxes may overhang its edges.
 * The rules the driver imposes are checked before anything native is called, and a failure throws
 * {@link IllegalArgumentException} naming the argument and what was expected. NVIDIA only (compute
 * capability 9.0 and newer): on HIP {@link #tiled2d} raises {@link IrisPlatformException}.
 */
public final class TensorMap {
    /** Bytes of a descriptor ({@code IRIS_TENSOR_MAP_BYTES}, {@code sizeof(CUtensorMap)}). */
    public static final int BYTES = IrisRuntime.IRIS_TENSOR_MAP_BYTES;
    /** Alignment of the descriptor as a kernel parameter. */
    public static final int ALIGNMENT = 64;
    /** Largest box side, in elements. */
    public static final int MAX_BOX = 256;
    /** Largest matrix side, in elements (2^32). */
    public static final long MAX_DIMENSION = 1L << 32;
    /** Row strides must stay below this (2^40 bytes). */
    public static final long STRIDE_LIMIT = 1L << 40;
    /** Base address and row stride alignment, in bytes. */
    public static final int ADDRESS_ALIGNMENT = 16;

    private final byte[] descriptor;
    private final DType elementType;
    private final long base;
    private final long inner;
    private final long outer;
    private final long outerStrideBytes;
    private final int boxInner;
    private final int boxOuter;
    private final int swizzleBytes;

    private TensorMap(byte[] descriptor, DType elementType, long base, long inner, long outer, long outerStrideBytes,
                      int boxInner, int boxOuter, int swizzleBytes) {
        this.descriptor = descriptor;
        this.elementType = elementType;
        this.base = base;
        this.inner = inner;
        this.outer = outer;
        this.outerStrideBytes = outerStrideBytes;
        this.boxInner = boxInner;
        this.boxOuter = boxOuter;
        this.swizzleBytes = swizzleBytes;
    }

    /**
     * Encodes a tiled 2-D map of a row-major matrix: {@code outer} rows of {@code inner} contiguous
     * elements at device address {@code base}, rows {@code outerStrideBytes} apart; each copy moves
     * {@code boxOuter} rows of {@code boxInner} elements, swizzled in shared memory.
     *
     * @param elementType      BF16, F16 or F32
     * @param base             device address of element (0, 0); non-zero, 16-byte aligned
     * @param inner            elements per row (the contiguous dimension), 1 to 2^32
     * @param outer            rows, 1 to 2^32
     * @param outerStrideBytes bytes from one row to the next: a multiple of 16, at least a row, below 2^40
     * @param boxInner         elements per box row, 1 to 256; boxInner x element bytes a multiple of 16
     *                         and, when swizzled, at most the swizzle span
     * @param boxOuter         rows per box, 1 to 256
     * @param swizzleBytes     0 (none), 32, 64 or 128: the shared-memory swizzle span the kernel expects
     * @throws IllegalArgumentException an argument breaks one of the rules above
     * @throws IrisPlatformException    on HIP, which has no tensor maps
     * @throws dev.irisjvm.core.IrisNativeException the driver rejected the map or could not be reached
     */
    public static TensorMap tiled2d(DType elementType, long base, long inner, long outer, long outerStrideBytes,
                                    int boxInner, int boxOuter, int swizzleBytes) {
        check(elementType, base, inner, outer, outerStrideBytes, boxInner, boxOuter, swizzleBytes);
        NativeLibrary.ensureAvailable();
        byte[] d = new byte[BYTES];
        String call = "iris_tensor_map_2d(" + describe(elementType, base, inner, outer, outerStrideBytes, boxInner, boxOuter,
                swizzleBytes) + ")";
        int status = IrisRuntime.iris_tensor_map_2d(d, code(elementType), base, inner, outer, outerStrideBytes, boxInner,
                boxOuter, swizzleBytes);
        if (status == IrisRuntime.IRIS_ERROR_UNSUPPORTED) {
            throw NativeLibrary.platform().unavailable("TMA tensor maps", "an NVIDIA GPU of compute capability 9.0 (sm_90a)");
        }
        NativeCalls.check(status, call);
        return new TensorMap(d, elementType, base, inner, outer, outerStrideBytes, boxInner, boxOuter, swizzleBytes);
    }

    /**
     * The rules of {@link #tiled2d}, checked in Java (no native call, so testable anywhere); the
     * native side checks them again.
     */
    static void check(DType elementType, long base, long inner, long outer, long outerStrideBytes,
                      int boxInner, int boxOuter, int swizzleBytes) {
        if (elementType == null) {
            throw fail("elementType must not be null (BF16, F16 or F32)");
        }
        int bytes = switch (elementType) {
            case BF16, F16 -> 2;
            case F32 -> 4;
            default -> throw fail("elementType " + elementType + " is not supported; expected BF16, F16 or F32");
        };
        if (base == 0) {
            throw fail("base is 0 (NULL); expected a device address");
        }
        if ((base & (ADDRESS_ALIGNMENT - 1)) != 0) {
            throw fail("base 0x" + Long.toHexString(base) + " is not " + ADDRESS_ALIGNMENT + "-byte aligned");
        }
        if (inner < 1 || inner > MAX_DIMENSION) {
            throw fail("inner " + inner + " is outside [1, 2^32] elements");
        }
        if (outer < 1 || outer > MAX_DIMENSION) {
            throw fail("outer " + outer + " is outside [1, 2^32] rows");
        }
        if (outerStrideBytes % ADDRESS_ALIGNMENT != 0) {
            throw fail("outerStrideBytes " + outerStrideBytes + " is not a multiple of " + ADDRESS_ALIGNMENT);
        }
        if (outerStrideBytes >= STRIDE_LIMIT) {
            throw fail("outerStrideBytes " + outerStrideBytes + " is not below 2^40");
        }
        if (outerStrideBytes < inner * bytes) {
            throw fail("outerStrideBytes " + outerStrideBytes + " is less than a row (inner " + inner + " x " + bytes + " bytes)");
        }
        if (boxInner < 1 || boxInner > MAX_BOX) {
            throw fail("boxInner " + boxInner + " is outside [1, " + MAX_BOX + "]");
        }
        if (boxOuter < 1 || boxOuter > MAX_BOX) {
            throw fail("boxOuter " + boxOuter + " is outside [1, " + MAX_BOX + "]");
        }
        if (boxInner * bytes % 16 != 0) {
            throw fail("boxInner " + boxInner + " x " + bytes + " bytes is not a multiple of 16 bytes");
        }
        if (swizzleBytes != 0 && swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128) {
            throw fail("swizzleBytes " + swizzleBytes + " is not 0, 32, 64 or 128");
        }
        if (swizzleBytes != 0 && boxInner * bytes > swizzleBytes) {
            throw fail("boxInner " + boxInner + " x " + bytes + " bytes exceeds the " + swizzleBytes + "-byte swizzle span");
        }
    }

    private static IllegalArgumentException fail(String message) {
        return new IllegalArgumentException(NativeCalls.rankLabel() + ": TensorMap.tiled2d: " + message);
    }

    /** The {@code IRIS_TMA_*} code: Java's DType code (checked in the tests). */
    static int code(DType t) {
        return switch (t) {
            case F32 -> IrisRuntime.IRIS_TMA_F32;
            case F16 -> IrisRuntime.IRIS_TMA_F16;
            case BF16 -> IrisRuntime.IRIS_TMA_BF16;
            default -> throw new IllegalArgumentException("no tensor-map element type for " + t);
        };
    }

    /** Packs the descriptor as the kernel's next parameter (64-byte aligned, by value); allocates nothing. */
    public KernelArgs putInto(KernelArgs args) {
        return args.putBytes(descriptor, ALIGNMENT);
    }

    /**
     * Copies the 128 descriptor bytes to {@code member}, a view of an argument struct's
     * {@code iris_tma_descriptor} (iris/abi/tma.h); allocates nothing.
     */
    public void copyTo(BytePointer member) {
        member.position(0).put(descriptor);
    }

    /** A copy of the 128 descriptor bytes. */
    public byte[] bytes() {
        return descriptor.clone();
    }

    public DType elementType() {
        return elementType;
    }

    public long base() {
        return base;
    }

    public long inner() {
        return inner;
    }

    public long outer() {
        return outer;
    }

    public long outerStrideBytes() {
        return outerStrideBytes;
    }

    public int boxInner() {
        return boxInner;
    }

    public int boxOuter() {
        return boxOuter;
    }

    public int swizzleBytes() {
        return swizzleBytes;
    }

    private static String describe(DType t, long base, long inner, long outer, long stride, int boxInner, int boxOuter,
                                   int swizzle) {
        return String.format(Locale.ROOT, "%s %d x %d at 0x%x, rows %d bytes apart, box %d x %d, swizzle %d", t, outer, inner,
                base, stride, boxOuter, boxInner, swizzle);
    }

    /** E.g. "TensorMap(BF16 4096 x 4096 at 0x7f..., rows 8192 bytes apart, box 128 x 64, swizzle 128)": rows x elements. */
    @Override
    public String toString() {
        return "TensorMap(" + describe(elementType, base, inner, outer, outerStrideBytes, boxInner, boxOuter, swizzleBytes) + ")";
    }
}

package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.internal.NativeCalls;
import java.util.Arrays;

/**
 * The GEMM's argument checks, done before anything is launched. Each failure is an {@link
 * IllegalArgumentException} whose message starts with the rank and {@code gemm}, names the operand
 * and says what was expected, e.g. {@code "rank 1: gemm: K = 100 (A's columns) is not a multiple of
 * 8; ..."}. Pure functions (no GPU, no native call), so that every rule is unit-tested.
 */
final class GemmChecks {
    /** Contiguous dimensions and every leading dimension must be multiples of this many elements (16 bytes of 16-bit data). */
    static final int ELEMENT_MULTIPLE = 8;
    /** Every pointer must be aligned to this many bytes. */
    static final int POINTER_ALIGNMENT = 16;

    private GemmChecks() {}

    /** What the checks need to know about a tensor argument (a {@link dev.irisjvm.core.SymTensor}). */
    record Operand(String name, DType dtype, long[] shape, boolean live, String describe) {}

    static String who() {
        return NativeCalls.rankLabel() + ": gemm";
    }

    static IllegalArgumentException fail(String message) {
        return new IllegalArgumentException(who() + ": " + message);
    }

    // ---- dtypes ------------------------------------------------------------------------------------

    /** A and B both BF16 or both F16; C the same type or F32. */
    static void dtypes(DType a, DType b, DType c) {
        boolean in = (a == DType.BF16 || a == DType.F16) && b == a;
        boolean out = c == a || c == DType.F32;
        if (!in || !out) {
            throw fail("unsupported dtype combination A " + a + " x B " + b + " -> C " + c + "; supported: A and B both BF16 "
                    + "or both F16, C of the same type or F32 (kernels iris_gemm_<bf16|f16>[_km]_<nk|kn>_<in|f32>)");
        }
    }

    // ---- the problem -------------------------------------------------------------------------------

    /** Everything about a problem on device matrices; see {@link GemmProblem}. */
    static void problem(DeviceMatrix a, GemmALayout aLayout, DeviceMatrix b, GemmLayout layout, long bias, DeviceMatrix c,
                        float alpha, float beta) {
        notNull("A", a);
        notNull("A's layout", aLayout);
        notNull("B", b);
        notNull("layout", layout);
        notNull("C", c);
        dtypes(a.dtype(), b.dtype(), c.dtype());
        finite("alpha", alpha);
        finite("beta", beta);

        String describeA = aLayout == GemmALayout.MK ? "A (M x K)" : aLayout.describeA();
        long m = aLayout == GemmALayout.MK ? a.rows() : a.cols();
        long k = aLayout == GemmALayout.MK ? a.cols() : a.rows();
        if (m < 1 || k < 1) {
            throw fail(describeA + " is " + a.rows() + " x " + a.cols() + "; M and K must be >= 1");
        }
        String aShape = "A is " + a.rows() + " x " + a.cols() + (aLayout == GemmALayout.MK ? "" : ", K x M");
        long n;
        if (layout == GemmLayout.NK) {
            if (b.cols() != k) {
                throw fail(layout.describeB() + " is " + b.rows() + " x " + b.cols() + "; expected K = " + k
                        + " columns (" + aShape + ")");
            }
            n = b.rows();
        } else {
            if (b.rows() != k) {
                throw fail(layout.describeB() + " is " + b.rows() + " x " + b.cols() + "; expected K = " + k
                        + " rows (" + aShape + ")");
            }
            n = b.cols();
        }
        if (n < 1) {
            throw fail(layout.describeB() + " is " + b.rows() + " x " + b.cols() + "; N must be >= 1");
        }
        if (c.rows() != m || c.cols() != n) {
            throw fail("C is " + c.rows() + " x " + c.cols() + "; expected M x N = " + m + " x " + n);
        }
        fitsInt("M", m);
        fitsInt("N", n);
        fitsInt("K", k);
        // TMA copies each operand's rows, its contiguous dimension, in 16-byte units.
        if (aLayout == GemmALayout.MK || layout == GemmLayout.NK) {
            if (k % ELEMENT_MULTIPLE != 0) {
                String rows = aLayout == GemmALayout.MK ? (layout == GemmLayout.NK ? "A and B" : "A") : "B";
                throw fail("K = " + k + " (" + (aLayout == GemmALayout.MK ? "A's columns" : "B's columns") + ") is not a multiple of "
                        + ELEMENT_MULTIPLE + " (TMA copies rows of " + rows + " in 16-byte units)");
            }
        }
        if (aLayout == GemmALayout.KM && m % ELEMENT_MULTIPLE != 0) {
            throw fail("M = " + m + " (" + aLayout.describeA() + "'s columns) is not a multiple of " + ELEMENT_MULTIPLE
                    + " (TMA copies rows of A in 16-byte units)");
        }
        if (n % ELEMENT_MULTIPLE != 0) {
            throw fail("N = " + n + " is not a multiple of " + ELEMENT_MULTIPLE + " (C is stored in 16-byte vectors"
                    + (layout == GemmLayout.KN ? ", and TMA copies rows of B in 16-byte units" : "") + ")");
        }
        leadingDimension(aLayout == GemmALayout.MK ? "A" : aLayout.describeA(), a);
        leadingDimension(layout.describeB(), b);
        leadingDimension("C", c);
        fitsInt("ldc", c.ld());
        for (GemmTile tile : GemmTile.choices(m)) {
            long tiles = tile.tiles(m, n);
            if (tiles > Integer.MAX_VALUE) {
                throw fail("M x N = " + m + " x " + n + " makes " + tiles + " tiles of " + tile.describe()
                        + "; the kernel numbers tiles with an int");
            }
        }
        address("A", a.address());
        address("B", b.address());
        address("C", c.address());
        if (bias != 0) {
            address("bias", bias);
        }
        long cBytes = c.spanBytes();
        disjoint("C", c.address(), cBytes, "A", a.address(), a.spanBytes());
        disjoint("C", c.address(), cBytes, "B", b.address(), b.spanBytes());
        if (bias != 0) {
            disjoint("C", c.address(), cBytes, "bias", bias, n * c.dtype().byteSize());
        }
    }

    /** Output tiles of an {@code m} x {@code n} C in its first tile ({@link GemmTile#of}): 128 x 256, or 64 x 128 for M <= 64. */
    static long tiles(long m, long n) {
        return GemmTile.of(m).tiles(m, n);
    }

    static long ceilDiv(long x, long d) {
        return (x + d - 1) / d;
    }

    /** The layouts of {@link GemmProblem}'s one-argument form, not null. */
    static GemmLayouts layouts(GemmLayouts layouts) {
        notNull("layouts", layouts);
        return layouts;
    }

    /** alpha and beta must be numbers: a NaN or infinite factor would turn every element into one. */
    private static void finite(String name, float value) {
        if (!Float.isFinite(value)) {
            throw fail(name + " = " + value + " is not finite; expected a finite scale factor");
        }
    }

    private static void notNull(String name, Object value) {
        if (value == null) {
            throw fail(name + " must not be null");
        }
    }

    private static void fitsInt(String name, long value) {
        if (value > Integer.MAX_VALUE) {
            throw fail(name + " = " + value + " exceeds 2^31 - 1 (the kernel takes it as an int)");
        }
    }

    /** ld >= cols and a multiple of 8 elements, so that every row starts 16-byte aligned. */
    private static void leadingDimension(String name, DeviceMatrix x) {
        if (x.ld() < x.cols()) {
            throw fail(name + "'s leading dimension " + x.ld() + " is less than its " + x.cols() + " columns");
        }
        if (x.ld() % ELEMENT_MULTIPLE != 0) {
            throw fail(name + "'s leading dimension " + x.ld() + " is not a multiple of " + ELEMENT_MULTIPLE
                    + " (every row must start 16-byte aligned)");
        }
    }

    private static void address(String name, long address) {
        if (address == 0) {
            throw fail(name + "'s address is 0 (NULL)");
        }
        if ((address & (POINTER_ALIGNMENT - 1)) != 0) {
            throw fail(name + "'s address 0x" + Long.toHexString(address) + " is not " + POINTER_ALIGNMENT + "-byte aligned");
        }
    }

    /** The output must not alias an input: the kernel reads them while it writes C. */
    private static void disjoint(String name, long address, long bytes, String otherName, long other, long otherBytes) {
        boolean overlap = address < other + otherBytes && other < address + bytes;
        if (bytes > 0 && otherBytes > 0 && overlap) {
            throw fail(name + " [0x" + Long.toHexString(address) + ", +" + bytes + " bytes) overlaps " + otherName + " [0x"
                    + Long.toHexString(other) + ", +" + otherBytes + " bytes); the output must not alias an input");
        }
    }

    // ---- tensors -----------------------------------------------------------------------------------

    /**
     * The tensor form: A [M, K] (MK) or [K, M] (KM), B [N, K] (NK) or [K, N] (KN), C [M, N], bias
     * [N] or null; live tensors; bias of C's dtype. Shapes are compared with each other here so that
     * the message shows tensor shapes; the rest is {@link #problem}.
     */
    static void tensors(Operand a, GemmALayout aLayout, Operand b, GemmLayout layout, Operand bias, Operand c) {
        notNull("A", a);
        notNull("A's layout", aLayout);
        notNull("B", b);
        notNull("layout", layout);
        notNull("C", c);
        for (Operand t : bias == null ? new Operand[] {a, b, c} : new Operand[] {a, b, c, bias}) {
            if (!t.live()) {
                throw fail(t.name() + " " + t.describe() + " was freed");
            }
        }
        rank(a, 2, aLayout == GemmALayout.MK ? "a rank-2 M x K tensor" : "a rank-2 K x M tensor (" + aLayout.describeA() + ")");
        rank(b, 2, "a rank-2 " + layout.shape() + " tensor (" + layout.describeB() + ")");
        rank(c, 2, "a rank-2 M x N tensor");
        dtypes(a.dtype(), b.dtype(), c.dtype());
        boolean mk = aLayout == GemmALayout.MK;
        long m = a.shape()[mk ? 0 : 1];
        long k = a.shape()[mk ? 1 : 0];
        long bk = layout == GemmLayout.NK ? b.shape()[1] : b.shape()[0];
        long n = layout == GemmLayout.NK ? b.shape()[0] : b.shape()[1];
        if (bk != k) {
            throw fail(layout.describeB() + " " + b.describe() + " does not match " + (mk ? "A" : aLayout.describeA()) + " "
                    + a.describe() + ": expected "
                    + (layout == GemmLayout.NK ? "shape [N, " + k + "]" : "shape [" + k + ", N]") + " (K = " + k + ")");
        }
        if (c.shape()[0] != m || c.shape()[1] != n) {
            throw fail("C " + c.describe() + " has shape " + Arrays.toString(c.shape()) + "; expected [M, N] = [" + m + ", " + n + "]");
        }
        if (bias != null) {
            if (bias.shape().length != 1 || bias.shape()[0] != n) {
                throw fail("bias " + bias.describe() + " has shape " + Arrays.toString(bias.shape()) + "; expected [N] = [" + n + "]");
            }
            if (bias.dtype() != c.dtype()) {
                throw fail("bias has dtype " + bias.dtype() + "; expected " + c.dtype() + " (C's dtype)");
            }
        }
    }

    private static void rank(Operand t, int expected, String what) {
        if (t.shape().length != expected) {
            throw fail(t.name() + " " + t.describe() + " has rank " + t.shape().length + "; expected " + what);
        }
    }

    // ---- device and options ------------------------------------------------------------------------

    /** The kernels are sm_90a code: compute capability 9.0 exactly, and {@value Gemm#SHARED_BYTES} bytes of shared memory per block. */
    static void device(Platform platform, DeviceProperties p) {
        if (platform != Platform.CUDA) {
            throw platform.unavailable(Gemm.MODULE, Gemm.REQUIREMENT);
        }
        if (p.major() != 9 || p.minor() != 0) {
            throw notOnThisGpu(platform, p, Gemm.MODULE, "compute capability 9.0 (" + Gemm.REQUIREMENT + ")", "has " + p.computeCapability());
        }
        sharedMemory(platform, p, Gemm.MODULE, Gemm.SHARED_BYTES);
    }

    /** That GPU {@code p} lets a block of {@code module} have {@code bytes} of shared memory. */
    static void sharedMemory(Platform platform, DeviceProperties p, String module, long bytes) {
        if (p.sharedMemoryPerBlockOptin() < bytes) {
            throw notOnThisGpu(platform, p, module, bytes + " bytes of shared memory per block", "allows " + p.sharedMemoryPerBlockOptin());
        }
    }

    /** "rank r: not available on this GPU: MODULE needs REQUIREMENT; GPU d (name) HAS". */
    static IrisPlatformException notOnThisGpu(Platform platform, DeviceProperties p, String module, String requirement, String has) {
        return new IrisPlatformException(NativeCalls.rankLabel() + ": not available on this GPU: " + module + " needs " + requirement
                + "; GPU " + p.device() + " (" + p.name() + ") " + has, platform, module, requirement);
    }

    static void groupM(int groupM) {
        if (groupM < 1) {
            throw new IllegalArgumentException(who() + ": groupM must be >= 1 (tile rows per group of the tile order), got " + groupM);
        }
    }
}

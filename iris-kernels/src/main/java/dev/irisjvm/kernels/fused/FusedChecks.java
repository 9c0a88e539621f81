package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.util.Arrays;

/**
 * The fused operations' argument checks, done before anything is allocated or launched. Each
 * failure is an {@link IllegalArgumentException} whose message starts with the rank and the class,
 * names the argument, what it is and what was expected, e.g. {@code "rank 1: AllGatherGemm: M = 301
 * is not a multiple of world size 2 (the rows of A are split evenly over the ranks)"}. Pure
 * functions over {@link Operand}s, so every rule is unit-tested without a GPU.
 */
final class FusedChecks {
    /** K, N and leading dimensions in multiples of this many elements: 16 bytes of 16-bit data. */
    static final int ELEMENT_MULTIPLE = 8;
    /** Every pointer 16-byte aligned. */
    static final int POINTER_ALIGNMENT = 16;

    private FusedChecks() {}

    /**
     * What the checks need to know about a tensor argument.
     *
     * @param onHeap whether it lives on the symmetric heap of the Iris instance the operation was created from
     */
    record Operand(String name, DType dtype, long[] shape, boolean live, boolean onHeap, long address, long bytes,
                   String describe) {
        long rows() {
            return shape[0];
        }

        long cols() {
            return shape[shape.length - 1];
        }
    }

    static String who(int rank, FusedOp op) {
        return "rank " + rank + ": " + op.className();
    }

    static IllegalArgumentException fail(String who, String message) {
        return new IllegalArgumentException(who + ": " + message);
    }

    static void notNull(String who, String name, Object value) {
        if (value == null) {
            throw fail(who, name + " must not be null");
        }
    }

    // ---- creation --------------------------------------------------------------------------------

    /**
     * The problem an instance is created for, in the kernel's terms: {@code m} x {@code n} output
     * tiles of this rank, {@code k} products per element (all-scatter: n is this rank's columns;
     * the reductions: k is this rank's share of K).
     */
    static void problem(String who, FusedOp op, long m, long n, long k, int world) {
        String nName = op == FusedOp.ALL_SCATTER ? "N_local" : "N";
        String kName = op == FusedOp.ALL_REDUCE || op == FusedOp.REDUCE_SCATTER ? "K_local" : "K";
        if (world < 1) {
            throw fail(who, "world size " + world + " must be >= 1");
        }
        if (m < 1 || n < 1 || k < 1) {
            throw fail(who, "M, " + nName + " and " + kName + " must be >= 1, got M = " + m + ", " + nName + " = " + n + ", "
                    + kName + " = " + k);
        }
        fitsInt(who, "M", m);
        fitsInt(who, nName, n);
        fitsInt(who, kName, k);
        if (k % ELEMENT_MULTIPLE != 0) {
            throw fail(who, kName + " = " + k + " is not a multiple of " + ELEMENT_MULTIPLE
                    + " (the kernels copy rows of A in 16-byte units)");
        }
        if (n % ELEMENT_MULTIPLE != 0) {
            throw fail(who, nName + " = " + n + " is not a multiple of " + ELEMENT_MULTIPLE
                    + " (tiles are stored and sent in 16-byte vectors)");
        }
        if (op.splitsRows() && m % world != 0) {
            throw fail(who, "M = " + m + " is not a multiple of world size " + world + " (" + splitRows(op)
                    + " are split evenly over the ranks)");
        }
        if (op == FusedOp.ALL_SCATTER) {
            fitsInt(who, "world size x N_local", n * world);
        }
        long tiles = FusedWorkspace.tiles(m, n);
        if (tiles > Integer.MAX_VALUE / 8) {
            throw fail(who, "M x " + nName + " = " + m + " x " + n + " makes " + tiles + " tiles of " + Gemm.TILE_M + " x "
                    + Gemm.TILE_N + "; the kernels number tiles (and trace slots) with an int");
        }
    }

    /** M rows that {@code variant} (resolved) can split over the ranks: the fused kernels' in blocks of whole tiles. */
    static void rows(String who, FusedOp op, FusedVariant variant, long m, int world) {
        if (variant != FusedVariant.UNFUSED && !op.kernelsTakeRows(m, world)) {
            throw fail(who, notWholeTiles(m, world) + " = " + (long) Gemm.TILE_M * world + " (" + splitRows(op) + " are split over the ranks in blocks of whole "
                    + Gemm.TILE_M + "-row tiles" + (op.onlyUnfusedTakesRows(m, world)
                    ? "; UNFUSED, which AUTO chooses for such M, takes any multiple of the world size)" : ")"));
        }
    }

    /**
     * A call of an UNFUSED instance whose C has columns past N (ldc &gt; N) runs the fused kernel
     * instead of the collective, which would overwrite them: the kernel must take the rows.
     */
    static void kernelCall(String who, FusedOp op, long m, long n, int world, int ldc) {
        if (ldc != n && !op.kernelsTakeRows(m, world)) {
            throw fail(who, "C's leading dimension " + ldc + " is more than N = " + n + ": such a call runs the fused kernel"
                    + " (the collective of UNFUSED would overwrite the columns past N), whose rows per rank are whole "
                    + Gemm.TILE_M + "-row tiles, and " + notWholeTiles(m, world) + "; give C N columns (ldc = N)");
        }
    }

    /** "M = 8 is not a multiple of 128 x world size 2": why the fused kernels cannot split M rows. */
    private static String notWholeTiles(long m, int world) {
        return "M = " + m + " is not a multiple of " + Gemm.TILE_M + " x world size " + world;
    }

    private static String splitRows(FusedOp op) {
        return op == FusedOp.REDUCE_SCATTER ? "the rows of C" : "the rows of A";
    }

    /** A variant the operation's kernels on that mainloop come in (after AUTO was resolved). */
    static void variant(String who, FusedOp op, GemmMainloop mainloop, FusedVariant v) {
        if (!op.variants(mainloop).contains(v)) {
            throw fail(who, "variant " + v + " does not exist for " + op.title() + " on the " + mainloop + " mainloop; it has "
                    + op.variants(mainloop) + (mainloop == GemmMainloop.PORTABLE
                    ? " (the portable kernels' warps all compute: none is spare)"
                    : op == FusedOp.ALL_GATHER ? " (the spare producer warps push this rank's rows of A to the peers)" : ""));
        }
    }

    /** A configured tile width (FusedConfig.tileN, 0: chosen per shape) the operation's kernels on that mainloop come in. */
    static void tileN(String who, FusedOp op, GemmMainloop mainloop, int tileN) {
        if (tileN != 0 && !op.tileWidths(mainloop).contains(tileN)) {
            throw fail(who, "config tileN " + tileN + " is not a tile width of the " + op.title() + " kernels on the " + mainloop
                    + " mainloop; they come in " + op.tileWidths(mainloop) + " (or 0: chosen per shape)");
        }
    }

    /** Tracing needs the Hopper kernels (the portable ones record no timeline) and a fused kernel. */
    static void tracing(String who, FusedOp op, GemmMainloop mainloop, FusedVariant variant, boolean tracing, long m, int world) {
        if (tracing && mainloop == GemmMainloop.PORTABLE) {
            throw fail(who, "config tracing: the portable mainloop's kernels record no timeline (the Hopper ones do); "
                    + "turn tracing off or run the HOPPER mainloop");
        }
        if (tracing && variant == FusedVariant.UNFUSED) {
            throw fail(who, "config tracing: UNFUSED runs no fused kernel, whose timeline tracing records; turn tracing off"
                    + (op.kernelsTakeRows(m, world) ? " or choose EPILOGUE or SPARE_WARPS"
                    : " (the kernels cannot take M = " + m + ": they need a multiple of " + Gemm.TILE_M + " x world size " + world + ")"));
        }
    }

    /**
     * A config's split-K (1 or 2 here; 0 was resolved before) fits the operation and K: two units of
     * K per tile need the all-gather kernel and K >= {@value FusedOp#MIN_SPLIT_K} (a k-block on each
     * side). Any number of blocks will do, one included: the two halves of a tile meet in arrival
     * order (split_k_exchange.cuh).
     */
    static void splitK(String who, FusedOp op, GemmMainloop mainloop, int splitK, long k) {
        if (splitK != 2) {
            return;
        }
        if (mainloop == GemmMainloop.PORTABLE) {
            throw fail(who, "config splitK 2: the portable mainloop's kernels do not split K; use 0 or 1");
        }
        if (!op.splitsK()) {
            throw fail(who, "config splitK 2: the " + op.title() + " kernels do not split K (all-gather + GEMM's do); use 0 or 1");
        }
        if (k < FusedOp.MIN_SPLIT_K) {
            throw fail(who, "config splitK 2 needs K >= " + FusedOp.MIN_SPLIT_K + " (a k-block of 128 columns on each side), got K = "
                    + k);
        }
    }

    /**
     * The GPU runs the kernels of {@code mainloop}: the Hopper ones are sm_90a code (compute
     * capability 9.0 exactly, and the GEMM's shared memory per block), the portable ones need
     * compute capability 8.0 or later and {@value FusedOp#PORTABLE_SHARED_BYTES} bytes per block.
     */
    static void device(String who, FusedOp op, GemmMainloop mainloop, Platform platform, DeviceProperties p) {
        boolean portable = mainloop == GemmMainloop.PORTABLE;
        String module = op.module(mainloop);
        if (platform != Platform.CUDA) {
            throw platform.unavailable(module, portable ? FusedOp.PORTABLE_REQUIREMENT : FusedOp.REQUIREMENT);
        }
        if (portable ? p.major() < 8 : p.major() != 9 || p.minor() != 0) {
            String requirement = portable ? FusedOp.PORTABLE_REQUIREMENT : "compute capability 9.0 (" + FusedOp.REQUIREMENT + ")";
            throw new IrisPlatformException(who + ": not available on this GPU: " + module + " needs " + requirement
                    + "; GPU " + p.device() + " (" + p.name() + ") has " + p.computeCapability(), platform, module, requirement);
        }
        int shared = portable ? FusedOp.PORTABLE_SHARED_BYTES : Gemm.HOOKS_SHARED_BYTES;
        if (p.sharedMemoryPerBlockOptin() < shared) {
            String requirement = shared + " bytes of shared memory per block";
            throw new IrisPlatformException(who + ": not available on this GPU: " + module + " needs " + requirement
                    + "; GPU " + p.device() + " (" + p.name() + ") allows " + p.sharedMemoryPerBlockOptin(), platform,
                    module, requirement);
        }
    }

    // ---- calls -----------------------------------------------------------------------------------

    /** A live tensor. */
    static void live(String who, Operand t) {
        if (!t.live()) {
            throw fail(who, t.name() + " " + t.describe() + " was freed");
        }
    }

    /** A and B: both BF16 or both F16. */
    static void inputs(String who, Operand a, Operand b) {
        if (a.dtype() != DType.BF16 && a.dtype() != DType.F16) {
            throw fail(who, "A has dtype " + a.dtype() + "; expected BF16 or F16");
        }
        if (b.dtype() != a.dtype()) {
            throw fail(who, "B has dtype " + b.dtype() + "; expected " + a.dtype() + " (A's dtype)");
        }
    }

    /** C and the bias are written / read in the input type. */
    static void sameType(String who, Operand t, DType input) {
        if (t.dtype() != input) {
            throw fail(who, t.name() + " has dtype " + t.dtype() + "; expected " + input
                    + " (the fused kernels compute in F32 and store C and read the bias in the input type)");
        }
    }

    /** An exact shape, explained: e.g. expected [M, K] = [300, 520]. */
    static void shape(String who, Operand t, String symbolic, long[] expected, String context) {
        if (!Arrays.equals(t.shape(), expected)) {
            throw fail(who, t.name() + " " + t.describe() + " has shape " + Arrays.toString(t.shape()) + "; expected "
                    + symbolic + " = " + Arrays.toString(expected) + " (" + context + ")");
        }
    }

    /** B of the layout: [n, k] for NK, [k, n] for KN. */
    static void b(String who, Operand b, GemmLayout layout, long n, long k, String nName, String kName, String context) {
        notNull(who, "layout", layout);
        long[] expected = layout == GemmLayout.NK ? new long[] {n, k} : new long[] {k, n};
        String symbolic = layout == GemmLayout.NK ? "[" + nName + ", " + kName + "]" : "[" + kName + ", " + nName + "]";
        if (!Arrays.equals(b.shape(), expected)) {
            throw fail(who, "B " + b.describe() + " has shape " + Arrays.toString(b.shape()) + "; expected " + symbolic + " = "
                    + Arrays.toString(expected) + " for layout " + layout + " (" + layout.shape() + "; " + context + ")");
        }
    }

    /** The bias: [n] of the input type. */
    static void bias(String who, Operand bias, long n, String nName, DType input) {
        if (bias.shape().length != 1 || bias.shape()[0] != n) {
            throw fail(who, "bias " + bias.describe() + " has shape " + Arrays.toString(bias.shape()) + "; expected [" + nName
                    + "] = [" + n + "]");
        }
        sameType(who, bias, input);
    }

    /**
     * C: {@code rows} rows of at least {@code minCols} elements; its second dimension is the leading
     * dimension ldc (a multiple of 8, below 2^31). Returns ldc.
     */
    static int output(String who, Operand c, long rows, long minCols, String symbolic, String context) {
        if (c.shape().length != 2) {
            throw fail(who, "C " + c.describe() + " has rank " + c.shape().length + "; expected a rank-2 tensor " + symbolic
                    + " (" + context + ")");
        }
        if (c.rows() != rows || c.cols() < minCols) {
            throw fail(who, "C " + c.describe() + " has shape " + Arrays.toString(c.shape()) + "; expected " + symbolic
                    + " with " + rows + " rows and ldc >= " + minCols + " (" + context + ")");
        }
        if (c.cols() % ELEMENT_MULTIPLE != 0) {
            throw fail(who, "C's leading dimension " + c.cols() + " is not a multiple of " + ELEMENT_MULTIPLE
                    + " (every row must start 16-byte aligned)");
        }
        fitsInt(who, "C's leading dimension", c.cols());
        return (int) c.cols();
    }

    /** A tensor that peers reach at the same heap offset: it must be on this instance's symmetric heap. */
    static void symmetric(String who, Operand t, String why) {
        if (!t.onHeap()) {
            throw fail(who, t.name() + " " + t.describe() + " is not on the symmetric heap of the Iris instance this "
                    + "operation was created from; " + why);
        }
    }

    static void aligned(String who, Operand t) {
        if (t.address() == 0) {
            throw fail(who, t.name() + "'s address is 0 (NULL)");
        }
        if ((t.address() & (POINTER_ALIGNMENT - 1)) != 0) {
            throw fail(who, t.name() + "'s address 0x" + Long.toHexString(t.address()) + " is not " + POINTER_ALIGNMENT
                    + "-byte aligned");
        }
    }

    /** The output must not alias an input: the kernel reads them while it writes C. */
    static void disjoint(String who, Operand out, Operand in) {
        boolean overlap = out.address() < in.address() + in.bytes() && in.address() < out.address() + out.bytes();
        if (out.bytes() > 0 && in.bytes() > 0 && overlap) {
            throw fail(who, out.name() + " " + out.describe() + " overlaps " + in.name() + " " + in.describe()
                    + "; the output must not alias an input");
        }
    }

    private static void fitsInt(String who, String name, long value) {
        if (value > Integer.MAX_VALUE) {
            throw fail(who, name + " = " + value + " exceeds 2^31 - 1 (the kernels take it as an int)");
        }
    }
}

package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.Arrays;

/**
 * The argument checks of the attention kernels ({@link Attention}, {@link RingAttention}, {@link
 * FlashDecode}), done before anything is launched. Each failure is an {@link
 * IllegalArgumentException} whose message starts with the rank and the operation, names the
 * argument and says what was expected, e.g. {@code "rank 1: attention: qLen = 200 is not a
 * multiple of 128 (...)"}. Pure functions (no GPU, no native call), so that every rule is
 * unit-tested.
 */
final class AttentionChecks {
    /** Query and key rows per tile of the wgmma kernels: sequence lengths are multiples of this. */
    static final int TILE = KernelAbi.IRIS_ATTENTION_TILE;
    /** Largest grid y and z dimension (heads, batch). */
    static final int MAX_GRID_YZ = 65535;
    /** Tensor-map bases, and every 16-bit tensor, must be aligned to this many bytes. */
    static final int POINTER_ALIGNMENT = 16;
    /** Flash-decode: keys per CTA are a multiple of this, and at most {@link #MAX_DECODE_CHUNK}. */
    static final int DECODE_CHUNK_MULTIPLE = KernelAbi.IRIS_FLASH_DECODE_CHUNK_MULTIPLE;
    static final int MAX_DECODE_CHUNK = KernelAbi.IRIS_FLASH_DECODE_MAX_CHUNK;
    /** Flash-decode: at most this many query heads per K/V head. */
    static final int MAX_DECODE_GROUP = KernelAbi.IRIS_FLASH_DECODE_MAX_GROUP;

    private AttentionChecks() {}

    /** What the checks need to know about a tensor argument (a {@link dev.irisjvm.core.SymTensor}). */
    record Operand(String name, DType dtype, long[] shape, boolean live, String describe) {}

    static String who(String op) {
        return NativeCalls.rankLabel() + ": " + op;
    }

    static IllegalArgumentException fail(String op, String message) {
        return new IllegalArgumentException(who(op) + ": " + message);
    }

    static void notNull(String op, String name, Object value) {
        if (value == null) {
            throw fail(op, name + " must not be null");
        }
    }

    /** BF16 or F16: the kernels' element types. */
    static void dtype(String op, DType t) {
        notNull(op, "dtype", t);
        if (t != DType.BF16 && t != DType.F16) {
            throw fail(op, "dtype " + t + " is not supported; expected BF16 or F16 (Q, K, V and O all of it)");
        }
    }

    static void positive(String op, String name, long value) {
        if (value < 1) {
            throw fail(op, name + " = " + value + " must be >= 1");
        }
    }

    static void headDim(String op, int d) {
        if (d != 64 && d != 128) {
            throw fail(op, "headDim = " + d + " is not supported; expected 64 or 128");
        }
    }

    /** qHeads a multiple of kvHeads (grouped-query attention), both within a grid dimension. */
    static void heads(String op, int qHeads, int kvHeads) {
        positive(op, "qHeads", qHeads);
        positive(op, "kvHeads", kvHeads);
        if (qHeads % kvHeads != 0) {
            throw fail(op, "qHeads = " + qHeads + " is not a multiple of kvHeads = " + kvHeads
                    + " (grouped-query attention: query head h reads K/V head h / (qHeads / kvHeads))");
        }
        if (qHeads > MAX_GRID_YZ) {
            throw fail(op, "qHeads = " + qHeads + " exceeds " + MAX_GRID_YZ + " (the grid's y dimension)");
        }
    }

    static void batch(String op, int batch) {
        positive(op, "batch", batch);
        if (batch > MAX_GRID_YZ) {
            throw fail(op, "batch = " + batch + " exceeds " + MAX_GRID_YZ + " (the grid's z dimension)");
        }
    }

    /** A sequence length of the wgmma kernels: a positive multiple of 128. */
    static void sequence(String op, String name, int len) {
        positive(op, name, len);
        if (len % TILE != 0) {
            throw fail(op, name + " = " + len + " is not a multiple of " + TILE + " (the kernels work on tiles of "
                    + TILE + " query and key rows and do not mask ragged ends)");
        }
    }

    /**
     * The rows of a [batch, heads, len, headDim] tensor seen as a matrix must be addressable with an
     * int (the kernel's TMA row coordinate) and its elements with a long.
     */
    static void rows(String op, String name, long batch, long heads, long len) {
        long rows = batch * heads * len;
        if (rows > Integer.MAX_VALUE) {
            throw fail(op, name + " has " + batch + " x " + heads + " x " + len + " = " + rows
                    + " rows; the kernel addresses rows with an int (at most 2^31 - 1)");
        }
    }

    /** Everything about an attention problem's shapes; see {@link AttentionProblem}. */
    static void problem(DType dtype, int batch, int qHeads, int kvHeads, int qLen, int kvLen, int headDim, boolean causal,
                        double scale) {
        String op = "attention";
        dtype(op, dtype);
        batch(op, batch);
        heads(op, qHeads, kvHeads);
        sequence(op, "qLen", qLen);
        sequence(op, "kvLen", kvLen);
        headDim(op, headDim);
        if (causal && qLen != kvLen) {
            throw fail(op, "causal attention needs qLen == kvLen (top-left aligned mask), got qLen = " + qLen
                    + ", kvLen = " + kvLen);
        }
        scale(op, scale);
        rows(op, "Q", batch, qHeads, qLen);
        rows(op, "K", batch, kvHeads, kvLen);
    }

    static void scale(String op, double scale) {
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw fail(op, "scale = " + scale + " must be a positive finite number (the softmax scale, usually 1 / sqrt(headDim))");
        }
    }

    // ---- addresses ---------------------------------------------------------------------------------

    static void address(String op, String name, long address, int alignment) {
        if (address == 0) {
            throw fail(op, name + "'s address is 0 (NULL)");
        }
        if ((address & (alignment - 1)) != 0) {
            throw fail(op, name + "'s address 0x" + Long.toHexString(address) + " is not " + alignment + "-byte aligned");
        }
    }

    /** An output must not alias an input or another output: the kernel reads them while it writes. */
    static void disjoint(String op, String name, long address, long bytes, String otherName, long other, long otherBytes) {
        if (address == 0 || other == 0 || bytes <= 0 || otherBytes <= 0) {
            return;
        }
        boolean overlap = address < other + otherBytes && other < address + bytes;
        if (overlap) {
            throw fail(op, name + " [0x" + Long.toHexString(address) + ", +" + bytes + " bytes) overlaps " + otherName + " [0x"
                    + Long.toHexString(other) + ", +" + otherBytes + " bytes); an output must not alias an input or another output");
        }
    }

    /** Q, K, V, O, (lse) of a forward problem: aligned, and the outputs apart from everything else. */
    static void buffers(AttentionProblem p, long q, long k, long v, long o, long lse) {
        String op = "attention";
        address(op, "Q", q, POINTER_ALIGNMENT);
        address(op, "K", k, POINTER_ALIGNMENT);
        address(op, "V", v, POINTER_ALIGNMENT);
        address(op, "O", o, POINTER_ALIGNMENT);
        if (lse != 0) {
            address(op, "lse", lse, 4);
        }
        long qb = p.qBytes();
        long kvb = p.kvBytes();
        disjoint(op, "O", o, qb, "Q", q, qb);
        disjoint(op, "O", o, qb, "K", k, kvb);
        disjoint(op, "O", o, qb, "V", v, kvb);
        if (lse != 0) {
            long lb = p.lseBytes();
            disjoint(op, "lse", lse, lb, "Q", q, qb);
            disjoint(op, "lse", lse, lb, "K", k, kvb);
            disjoint(op, "lse", lse, lb, "V", v, kvb);
            disjoint(op, "lse", lse, lb, "O", o, qb);
        }
    }

    // ---- tensors -----------------------------------------------------------------------------------

    static void live(String op, Operand t) {
        if (!t.live()) {
            throw fail(op, t.name() + " " + t.describe() + " was freed");
        }
    }

    static void shape(String op, Operand t, DType dtype, long... expected) {
        live(op, t);
        if (!Arrays.equals(t.shape(), expected)) {
            throw fail(op, t.name() + " " + t.describe() + " has shape " + Arrays.toString(t.shape()) + "; expected "
                    + Arrays.toString(expected));
        }
        if (t.dtype() != dtype) {
            throw fail(op, t.name() + " has dtype " + t.dtype() + "; expected " + dtype);
        }
    }

    /**
     * The tensor form of a forward: q [B, Hq, Sq, D], k and v [B, Hkv, Skv, D] of q's dtype, o like
     * q, lse [B, Hq, Sq] F32 or null. Returns the problem the shapes describe.
     */
    static AttentionProblem tensors(Operand q, Operand k, Operand v, Operand o, Operand lse, boolean causal, double scale) {
        String op = "attention";
        notNull(op, "q", q);
        notNull(op, "k", k);
        notNull(op, "v", v);
        notNull(op, "o", o);
        live(op, q);
        live(op, k);
        if (q.shape().length != 4) {
            throw fail(op, "q " + q.describe() + " has rank " + q.shape().length + "; expected [batch, qHeads, qLen, headDim]");
        }
        if (k.shape().length != 4) {
            throw fail(op, "k " + k.describe() + " has rank " + k.shape().length + "; expected [batch, kvHeads, kvLen, headDim]");
        }
        long[] qs = q.shape();
        long[] ks = k.shape();
        if (ks[0] != qs[0] || ks[3] != qs[3]) {
            throw fail(op, "k " + k.describe() + " does not match q " + q.describe() + ": expected [" + qs[0] + ", kvHeads, kvLen, "
                    + qs[3] + "]");
        }
        for (long d : qs) {
            fitsInt(op, "q's shape " + Arrays.toString(qs), d);
        }
        for (long d : ks) {
            fitsInt(op, "k's shape " + Arrays.toString(ks), d);
        }
        AttentionProblem p = new AttentionProblem(q.dtype(), (int) qs[0], (int) qs[1], (int) ks[1], (int) qs[2], (int) ks[2],
                (int) qs[3], causal, scale);
        shape(op, k, p.dtype(), ks);
        shape(op, v, p.dtype(), ks);
        shape(op, o, p.dtype(), qs);
        if (lse != null) {
            shape(op, lse, DType.F32, qs[0], qs[1], qs[2]);
        }
        return p;
    }

    static void fitsInt(String op, String name, long value) {
        if (value > Integer.MAX_VALUE) {
            throw fail(op, name + ": " + value + " exceeds 2^31 - 1 (the kernel takes it as an int)");
        }
    }

    // ---- device ------------------------------------------------------------------------------------

    /**
     * That {@code p} can run the attention kernels of {@code mainloop}: the wgmma ones ({@link
     * GemmMainloop#HOPPER}) are sm_90a code, compute capability 9.0 exactly; the mma.sync ones
     * ({@link GemmMainloop#PORTABLE}) need 8.0 or later; either needs its largest block's shared memory.
     */
    static void device(Platform platform, DeviceProperties p, GemmMainloop mainloop) {
        boolean hopper = mainloop == GemmMainloop.HOPPER;
        String module = hopper ? Attention.MODULE : Attention.PORTABLE_MODULE;
        String requirement = hopper ? Attention.REQUIREMENT : Attention.PORTABLE_REQUIREMENT;
        if (platform != Platform.CUDA) {
            throw platform.unavailable(module, requirement);
        }
        boolean runs = hopper ? p.major() == 9 && p.minor() == 0 : p.major() >= 8;
        if (!runs) {
            String needs = hopper ? "compute capability 9.0 (" + requirement + ")" : requirement;
            throw new IrisPlatformException(NativeCalls.rankLabel() + ": not available on this GPU: " + module + " needs " + needs
                    + "; GPU " + p.device() + " (" + p.name() + ") has " + p.computeCapability(), platform, module, needs);
        }
        long sharedBytes = AttentionProblem.sharedBytes(mainloop, 128);
        if (p.sharedMemoryPerBlockOptin() < sharedBytes) {
            String needs = sharedBytes + " bytes of shared memory per block";
            throw new IrisPlatformException(NativeCalls.rankLabel() + ": not available on this GPU: " + module + " needs " + needs
                    + "; GPU " + p.device() + " (" + p.name() + ") allows " + p.sharedMemoryPerBlockOptin(), platform, module, needs);
        }
    }
}

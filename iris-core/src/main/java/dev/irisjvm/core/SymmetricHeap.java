package dev.irisjvm.core;

import dev.irisjvm.core.heap.Block;
import dev.irisjvm.core.heap.HeapAllocator;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each rank's share of the symmetric heap: one device buffer of the same size on every rank,
 * mapped into every other rank's process. Tensors are carved out of it collectively, so the same
 * call order gives the same offsets everywhere. Freed blocks are reused (aligned, coalescing).
 *
 * <p>Factories return once the tensor is filled on this rank. Before a peer reads or writes it,
 * meet with {@link Iris#barrier()}.
 *
 * <pre>{@code
 * SymmetricHeap heap = iris.heap();
 * SymTensor x = heap.randn(DType.BF16, 4096, 4096);      // different values on each rank
 * SymTensor y = heap.zerosLike(x);
 * SymTensor idx = heap.arange(DType.I32, 1024);
 * }</pre>
 */
public final class SymmetricHeap {
    private static final Logger LOG = LoggerFactory.getLogger(SymmetricHeap.class);

    /** Bytes at the start of every heap that the runtime keeps for the device barriers ({@link BarrierSlots}). */
    static final long RESERVED_BYTES = 65536;

    private static final int UNIFORM = KernelAbi.IRIS_DISTRIBUTION_UNIFORM;
    private static final int NORMAL = KernelAbi.IRIS_DISTRIBUTION_NORMAL;
    private static final int INTEGER = KernelAbi.IRIS_DISTRIBUTION_INTEGER;

    private final Iris iris;
    private final long base;
    private final HeapAllocator allocator;
    private final Map<Long, SymTensor> live = new ConcurrentHashMap<>();
    private long allocationCount;
    private long randomCalls;

    SymmetricHeap(Iris iris, long base, long capacity) {
        this.iris = iris;
        this.base = base;
        this.allocator = new HeapAllocator(capacity, RESERVED_BYTES);
    }

    Iris iris() {
        return iris;
    }

    long base() {
        return base;
    }

    public long capacity() {
        return allocator.capacity();
    }

    public long usedBytes() {
        return allocator.usedBytes();
    }

    public long freeBytes() {
        return allocator.freeBytes();
    }

    public long largestFreeBlock() {
        return allocator.largestFreeBlock();
    }

    /** Tensors allocated and not yet closed, in offset order. */
    public List<SymTensor> liveTensors() {
        List<SymTensor> out = new ArrayList<>();
        for (Block b : allocator.liveBlocksSnapshot()) {
            SymTensor t = live.get(b.offset());
            if (t != null) {
                out.add(t);
            }
        }
        return out;
    }

    // ---- factories -----------------------------------------------------------------------------

    /** Uninitialized memory (whatever the block held before). */
    public SymTensor empty(DType dtype, long... shape) {
        return allocate(dtype, shape);
    }

    public SymTensor zeros(DType dtype, long... shape) {
        return full(0.0, dtype, shape);
    }

    public SymTensor ones(DType dtype, long... shape) {
        return full(1.0, dtype, shape);
    }

    /** Every element set to {@code value} converted to the dtype. */
    public SymTensor full(double value, DType dtype, long... shape) {
        SymTensor t = allocate(dtype, shape);
        ByteBuffer one = ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        dtype.put(one, value);
        long pattern = one.getLong(0);
        fillOrFree(t, () -> iris.kernels().fillPattern(t.deviceAddress(), t.numel(), dtype.byteSize(), pattern, iris.stream()));
        return t;
    }

    public SymTensor zerosLike(SymTensor other) {
        return zeros(other.dtype(), other.shape());
    }

    /** 0, 1, ..., n-1. */
    public SymTensor arange(DType dtype, long n) {
        return arange(0, n, 1, dtype);
    }

    /** start, start+step, ... below end (above end for a negative step). */
    public SymTensor arange(double start, double end, double step, DType dtype) {
        if (step == 0 || Double.isNaN(step)) {
            throw new IllegalArgumentException(rankLabel() + ": arange: step must be non-zero, got " + step);
        }
        long n = (long) Math.max(0, Math.ceil((end - start) / step));
        if (n == 0) {
            throw new IllegalArgumentException(rankLabel() + ": arange(" + start + ", " + end + ", " + step + ") is empty");
        }
        SymTensor t = allocate(dtype, n);
        fillOrFree(t, () -> iris.kernels().arange(t.deviceAddress(), n, dtype, start, step, iris.stream()));
        return t;
    }

    /** Standard normal values; each rank draws different ones (seed from IRIS_SEED, the rank and a counter). */
    public SymTensor randn(DType dtype, long... shape) {
        return randn(nextSeed(), dtype, shape);
    }

    /** Standard normal values from an explicit seed: the same seed gives the same tensor on any rank. */
    public SymTensor randn(long seed, DType dtype, long... shape) {
        requireFloating(dtype, "randn");
        return random(NORMAL, 0.0, 1.0, seed, dtype, shape);
    }

    /** Uniform in [0, 1). */
    public SymTensor rand(DType dtype, long... shape) {
        return uniform(0.0, 1.0, dtype, shape);
    }

    /** Uniform in [low, high). */
    public SymTensor uniform(double low, double high, DType dtype, long... shape) {
        return uniform(nextSeed(), low, high, dtype, shape);
    }

    public SymTensor uniform(long seed, double low, double high, DType dtype, long... shape) {
        requireFloating(dtype, "uniform");
        if (!(low < high)) {
            throw new IllegalArgumentException(rankLabel() + ": uniform: low must be below high, got [" + low + ", " + high + ")");
        }
        return random(UNIFORM, low, high, seed, dtype, shape);
    }

    /** Integers uniform in [low, high). */
    public SymTensor randint(long low, long high, DType dtype, long... shape) {
        return randint(nextSeed(), low, high, dtype, shape);
    }

    public SymTensor randint(long seed, long low, long high, DType dtype, long... shape) {
        if (low >= high) {
            throw new IllegalArgumentException(rankLabel() + ": randint: low must be below high, got [" + low + ", " + high + ")");
        }
        return random(INTEGER, low, high, seed, dtype, shape);
    }

    private SymTensor random(int distribution, double a, double b, long seed, DType dtype, long[] shape) {
        SymTensor t = allocate(dtype, shape);
        fillOrFree(t, () -> iris.kernels().random(t.deviceAddress(), t.numel(), dtype, distribution, a, b, seed, iris.stream()));
        return t;
    }

    private synchronized long nextSeed() {
        long s = iris.config().seed() * 0x9E3779B97F4A7C15L + iris.rank() * 0xBF58476D1CE4E5B9L + (++randomCalls);
        return s;
    }

    private void requireFloating(DType dtype, String op) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException(rankLabel() + ": " + op + ": dtype must be floating point, got " + dtype);
        }
    }

    private void fillOrFree(SymTensor t, Runnable fill) {
        try {
            fill.run();
            iris.synchronize();
        } catch (RuntimeException e) {
            t.close();
            throw e;
        }
    }

    // ---- allocation ----------------------------------------------------------------------------

    private SymTensor allocate(DType dtype, long... shape) {
        iris.ensureOpen("allocate");
        if (dtype == null) {
            throw new IllegalArgumentException(rankLabel() + ": dtype must not be null");
        }
        if (shape == null || shape.length == 0) {
            throw new IllegalArgumentException(rankLabel() + ": shape must have at least one dimension");
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 1) {
                throw new IllegalArgumentException(rankLabel() + ": shape[" + i + "] must be >= 1, got " + shape[i]);
            }
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(SymTensor.numel(shape), dtype.byteSize());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(rankLabel() + ": shape " + java.util.Arrays.toString(shape) + " overflows 64 bits");
        }
        long offset;
        synchronized (this) {
            offset = allocator.allocate(bytes);
            allocationCount++;
        }
        if (iris.config().checked()) {
            try {
                verifyAcrossRanks("allocate #" + allocationCount + " of " + bytes + " bytes", offset, bytes);
            } catch (RuntimeException e) {
                synchronized (this) {
                    allocator.free(offset);  // the diverged allocation is not handed out
                }
                throw e;
            }
        }
        SymTensor t = new SymTensor(this, dtype, shape, offset);
        live.put(offset, t);
        return t;
    }

    void release(SymTensor t) {
        // Free only after this rank's queued work on the block is done, so a reuse cannot race it.
        iris.synchronize();
        synchronized (this) {
            allocator.free(t.heapOffset());
        }
        live.remove(t.heapOffset());
        if (iris.config().checked()) {
            verifyAcrossRanks("free of " + t.describe(), t.heapOffset(), t.byteSize());
        }
    }

    /** Checked mode: every rank made the same call with the same result, or every rank learns who differed. */
    private void verifyAcrossRanks(String call, long offset, long bytes) {
        ByteBuffer mine = ByteBuffer.allocate(16).putLong(offset).putLong(bytes);
        byte[][] all = iris.allGather(mine.array());
        for (int r = 0; r < all.length; r++) {
            ByteBuffer theirs = ByteBuffer.wrap(all[r]);
            long o = theirs.getLong();
            long b = theirs.getLong();
            if (o != offset || b != bytes) {
                throw new IrisException(rankLabel() + ": checked mode: ranks diverged at " + call + ": rank "
                        + iris.rank() + " has offset " + offset + " size " + bytes + ", rank " + r + " has offset " + o
                        + " size " + b + " (allocation is collective: same sizes in the same order on every rank)");
            }
        }
    }

    /** Frees what is still allocated at close, naming each leak. */
    void closeAll() {
        List<SymTensor> leaked = liveTensors();
        if (!leaked.isEmpty()) {
            LOG.warn("{}: {} symmetric tensor(s) still allocated at close, freed now: {}", rankLabel(), leaked.size(), leaked);
        }
        for (SymTensor t : leaked) {
            t.markFreedAtClose();
        }
        live.clear();
    }

    private String rankLabel() {
        return "rank " + iris.rank();
    }
}

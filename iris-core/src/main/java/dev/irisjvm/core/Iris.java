package dev.irisjvm.core;

import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.IpcHandles;
import dev.irisjvm.core.gpu.MappedHostMemory;
import dev.irisjvm.core.gpu.Memcpy;
import dev.irisjvm.core.gpu.NativeCalls;
import dev.irisjvm.core.gpu.NativeLibrary;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.core.rendezvous.Rendezvous;
import dev.irisjvm.core.rendezvous.RendezvousConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.javacpp.LongPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank of a multi-GPU job: its GPU, its symmetric heap mapped into every peer, a default
 * stream, and host-side collectives over the rendezvous.
 *
 * <pre>{@code
 * // bin/iris-run -n 2 -- java -cp ... MyApp
 * try (Iris iris = Iris.init()) {
 *     SymTensor buf = iris.heap().zeros(DType.F32, 1024);
 *     iris.barrier();
 *     if (iris.rank() == 0) {
 *         SymTensor src = iris.heap().arange(DType.F32, 1024);
 *         buf.whole().on(1).storeRemote(src.whole());   // one-sided write into rank 1
 *     }
 *     iris.barrier();
 *     if (iris.rank() == 1) System.out.println(buf.toFloatArray()[42]);   // 42.0
 * }
 * }</pre>
 *
 * <p>Init and close are collective. Close releases every mapping and allocation, and a process may
 * init again afterwards.
 */
public final class Iris implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Iris.class);
    private static final int HANDSHAKE_BYTES = IpcHandles.HANDLE_BYTES + 8 + 4 + 64;

    private final IrisConfig config;
    private final int rank;
    private final int world;
    private final Rendezvous rendezvous;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<AutoCloseable> toRelease = new ArrayList<>();  // closed in reverse order
    private DeviceProperties deviceProperties;
    private Stream stream;
    private MappedHostMemory status;
    private long heapBase;
    private final long[] peerMappings;
    private int[] peerDevices;
    private DeviceContext deviceContext;
    private CoreKernels kernels;
    private SymmetricHeap heap;

    private Iris(IrisConfig config) {
        this.config = config;
        this.rank = config.rank();
        this.world = config.worldSize();
        this.peerMappings = new long[world];
        NativeCalls.setRank(rank);
        if (world > DeviceContext.MAX_RANKS) {
            throw new IllegalArgumentException("rank " + rank + ": world size " + world + " exceeds "
                    + DeviceContext.MAX_RANKS + ", the most ranks one node supports");
        }
        this.rendezvous = Rendezvous.connect(new RendezvousConfig(rank, world,
                config.rankEnvironment().masterAddr(), config.rankEnvironment().masterPort(),
                config.rankEnvironment().jobToken(), config.rendezvousTimeout(), 16 << 20));
    }

    /** Joins the job this process's environment describes (see {@link IrisConfig#fromEnvironment()}). */
    public static Iris init() {
        return init(IrisConfig.fromEnvironment());
    }

    /** Joins the job with an explicit configuration. Collective: every rank calls it. */
    public static Iris init(IrisConfig config) {
        NativeCalls.setRank(config.rank());
        NativeLibrary.ensureAvailable();
        int devices = Gpu.deviceCount();
        if (config.device() >= devices) {
            throw new IrisException("rank " + config.rank() + ": device " + config.device()
                    + " requested (IRIS_DEVICE or the local rank) but only " + devices + " GPU(s) are visible");
        }
        Gpu.setDevice(config.device());
        Iris iris = new Iris(config);
        try {
            iris.start();
            return iris;
        } catch (RuntimeException | Error e) {
            combine(e, iris.releaseAll());
            throw e;
        }
    }

    private void start() {
        deviceProperties = Gpu.properties(config.device());
        stream = track(Stream.create());
        status = track(MappedHostMemory.allocate(DeviceStatusRecord.BYTES));

        try (LongPointer p = new LongPointer(1)) {
            // Plain device memory unless IRIS_HEAP_FINE_GRAINED=1 (AMD); the choice: memory.cpp, iris_malloc_heap.
            NativeCalls.check(IrisRuntime.iris_malloc_heap(p, config.heapSize(), Platform.heapFlags(System.getenv())),
                    "iris_malloc_heap(heap of " + config.heapSize() + " bytes)");
            heapBase = p.get();
        }
        toRelease.add(() -> NativeCalls.check(IrisRuntime.iris_free(heapBase), "iris_free(heap)"));
        Memcpy.memset(heapBase, 0, config.heapSize(), stream);
        stream.synchronize();

        exchangeHeaps();

        long[] bases = new long[world];
        for (int r = 0; r < world; r++) {
            bases[r] = r == rank ? heapBase : peerMappings[r];
        }
        deviceContext = new DeviceContext(rank, world, config.heapSize(), config.deviceTimeout().toNanos(),
                status.address(), heapBase + SymmetricHeap.BARRIER_FLAGS_OFFSET,
                heapBase + SymmetricHeap.BARRIER_EPOCH_OFFSET, bases);
        kernels = track(new CoreKernels(deviceProperties.multiprocessorCount()));
        heap = new SymmetricHeap(this, heapBase, config.heapSize());
        // Nobody touches a peer's heap before every rank has mapped every heap.
        rendezvous.barrier();
        LOG.info("rank {}/{}: {} on GPU {} ({}, {} SMs), heap {} MiB, {}", rank, world, Gpu.runtimeDescription(),
                config.device(), deviceProperties.name(), deviceProperties.multiprocessorCount(),
                config.heapSize() >> 20, config.rankEnvironment().source());
    }

    /** Every rank exports its heap, all-gathers the handles and maps every peer's heap. */
    private void exchangeHeaps() {
        ByteBuffer mine = ByteBuffer.allocate(HANDSHAKE_BYTES);
        mine.put(IpcHandles.export(heapBase)).putLong(config.heapSize()).putInt(config.device());
        byte[] pci = deviceProperties.pciAddress().getBytes(StandardCharsets.US_ASCII);
        mine.put(pci, 0, Math.min(pci.length, 64));
        byte[][] all = rendezvous.allGather(mine.array());
        peerDevices = new int[world];
        for (int r = 0; r < world; r++) {
            ByteBuffer theirs = ByteBuffer.wrap(all[r]);
            byte[] handle = new byte[IpcHandles.HANDLE_BYTES];
            theirs.get(handle);
            long size = theirs.getLong();
            peerDevices[r] = theirs.getInt();
            if (size != config.heapSize()) {
                throw new IrisException("rank " + rank + ": rank " + r + " has a heap of " + size
                        + " bytes, this rank " + config.heapSize() + "; IRIS_HEAP_SIZE must agree on every rank");
            }
            if (r != rank) {
                if (peerDevices[r] == config.device()) {
                    throw new IrisException("rank " + rank + ": rank " + r + " drives the same GPU " + config.device()
                            + "; each rank needs its own GPU (IRIS_LOCAL_RANK / IRIS_DEVICE)");
                }
                if (!Gpu.canAccessPeer(config.device(), peerDevices[r])) {
                    throw new IrisException("rank " + rank + ": GPU " + config.device() + " cannot access GPU "
                            + peerDevices[r] + " of rank " + r + " (no peer-to-peer path)");
                }
                final int peer = r;
                peerMappings[r] = IpcHandles.open(handle, r);
                toRelease.add(() -> IpcHandles.close(peerMappings[peer], peer));
            }
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        toRelease.add(resource);
        return resource;
    }

    // ---- identity -------------------------------------------------------------------------------

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return world;
    }

    /** The GPU this rank drives. */
    public int device() {
        return config.device();
    }

    /** The GPU that rank {@code r} drives (for copy-engine baselines). */
    public int deviceOf(int r) {
        return peerDevices[r];
    }

    public DeviceProperties deviceProperties() {
        return deviceProperties;
    }

    public IrisConfig config() {
        return config;
    }

    public SymmetricHeap heap() {
        ensureOpen("heap");
        return heap;
    }

    /** The stream that this instance's operations use unless given another. */
    public Stream stream() {
        ensureOpen("stream");
        return stream;
    }

    /** What kernels need to reach every rank's heap: pass {@code bytes()} as their first argument. */
    public DeviceContext deviceContext() {
        ensureOpen("deviceContext");
        return deviceContext;
    }

    CoreKernels kernels() {
        return kernels;
    }

    Rendezvous rendezvous() {
        return rendezvous;
    }

    // ---- synchronization ------------------------------------------------------------------------

    /** Device-side barrier of all ranks, enqueued on the default stream (returns at once). */
    public void barrier() {
        barrier(stream());
    }

    /**
     * Device-side barrier on {@code s}: work enqueued after it on any rank runs after work enqueued
     * before it on every rank, and memory written before it is visible after it. A peer that does
     * not arrive within the device timeout makes the next {@link #synchronize} throw.
     */
    public void barrier(Stream s) {
        ensureOpen("barrier");
        kernels.barrier(deviceContext, s);
    }

    /** Waits for the default stream and raises any error a kernel recorded. */
    public void synchronize() {
        synchronize(stream());
    }

    public void synchronize(Stream s) {
        ensureOpen("synchronize");
        s.synchronize();
        checkDeviceStatus();
    }

    /** Raises what a kernel recorded in this rank's status (e.g. a wait that timed out). */
    public void checkDeviceStatus() {
        DeviceStatusRecord.check(status.buffer(), config.deviceTimeout().toMillis());
    }

    /** Host-side barrier over the rendezvous (no GPU work involved). */
    public void hostBarrier() {
        ensureOpen("hostBarrier");
        rendezvous.barrier();
    }

    /** Host-side broadcast of bytes from {@code root}; other ranks' arguments are ignored. */
    public byte[] broadcast(byte[] value, int root) {
        ensureOpen("broadcast");
        checkRank(root, "root");
        return rendezvous.broadcast(value, root);
    }

    public long broadcast(long value, int root) {
        byte[] b = broadcast(ByteBuffer.allocate(8).putLong(value).array(), root);
        return ByteBuffer.wrap(b).getLong();
    }

    public double broadcast(double value, int root) {
        return Double.longBitsToDouble(broadcast(Double.doubleToRawLongBits(value), root));
    }

    public String broadcast(String value, int root) {
        byte[] b = broadcast(value == null ? new byte[0] : value.getBytes(StandardCharsets.UTF_8), root);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** Host-side all-gather of bytes: element r is rank r's value. */
    public byte[][] allGather(byte[] value) {
        ensureOpen("allGather");
        return rendezvous.allGather(value);
    }

    void checkRank(int r, String argument) {
        if (r < 0 || r >= world) {
            throw new IllegalArgumentException("rank " + rank + ": " + argument + " " + r + " is out of range [0, " + world + ")");
        }
    }

    void ensureOpen(String op) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + op + " called after Iris.close()");
        }
    }

    // ---- close ----------------------------------------------------------------------------------

    /**
     * Collective: waits for this rank's work, meets the other ranks (so none still touches this
     * heap), then unmaps the peers' heaps and frees everything this instance allocated. Resources
     * are released even when the meeting fails (a peer died); that failure is then rethrown.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Throwable failure = null;
        try {
            stream.synchronize();
            checkDeviceStatus();
            rendezvous.barrier();
        } catch (RuntimeException e) {
            failure = e;
        }
        heap.closeAll();
        failure = combine(failure, releaseAll());
        if (failure != null) {
            throw failure instanceof RuntimeException re ? re : new IrisException("rank " + rank + ": close failed", failure);
        }
    }

    /** Releases in reverse order of acquisition; returns the first failure with later ones suppressed. */
    private Throwable releaseAll() {
        closed.set(true);
        Throwable failure = null;
        for (int i = toRelease.size() - 1; i >= 0; i--) {
            try {
                toRelease.get(i).close();
            } catch (Exception e) {
                failure = combine(failure, e);
            }
        }
        toRelease.clear();
        try {
            rendezvous.close();
        } catch (RuntimeException e) {
            failure = combine(failure, e);
        }
        return failure;
    }

    private static Throwable combine(Throwable first, Throwable next) {
        if (first == null) return next;
        if (next != null && next != first) first.addSuppressed(next);
        return first;
    }

    @Override
    public String toString() {
        return "Iris(rank " + rank + "/" + world + ", GPU " + config.device() + (closed.get() ? ", closed" : "") + ")";
    }
}

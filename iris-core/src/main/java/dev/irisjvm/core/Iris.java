package dev.irisjvm.core;

import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Platform;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.BuiltArchitectures;
import dev.irisjvm.core.internal.IpcHandles;
import dev.irisjvm.core.internal.MappedHostMemory;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.core.rendezvous.RankWatchdog;
import dev.irisjvm.core.rendezvous.Rendezvous;
import dev.irisjvm.core.rendezvous.RendezvousConfig;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.bytedeco.javacpp.BytePointer;
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
 *
 * <p><b>Nodes and ranks.</b> A job is made of nodes; the symmetric heap spans one node (CUDA IPC
 * maps no further). Init learns each rank's node from {@code IRIS_NODE_ID} where it is set (one
 * machine standing in for several), else from the launcher when it reports several nodes, else
 * from the host each rank runs on, and gives the teams {@link #world()}, {@link #node()} and
 * {@link #rail()}. Two numberings follow:
 * <ul>
 *   <li>world ranks: {@link #rank()}, {@link #worldSize()}, the host-side collectives
 *       ({@link #broadcast(byte[], int)}'s root, {@link #allGather}'s slots), the launchers;</li>
 *   <li>node ranks, indexes in {@link #node()}: everything the heap reaches, namely
 *       {@link RemoteTile}, {@link SymTensor#deviceAddress(int)}, {@link #deviceOf}, {@link #pciAddressOf},
 *       the device context ({@code ctx.rank}, {@code ctx.world}), the device barriers, and the
 *       collectives and fused operations built on the heap. A rank outside the node is an error
 *       naming it, never another node's rank by accident.</li>
 * </ul>
 * On a job of one node the two are the same, index for index. Symmetric allocation stays
 * collective over the whole job: every rank allocates the same sizes in the same order.
 * <pre>{@code
 * Team tp = iris.node().split(4);   // tensor-parallel groups of 4 inside a node
 * Team dp = iris.rail();            // the same GPU index on every node
 * }</pre>
 *
 * <p>A watchdog connects the ranks (see {@link RankWatchdog}). When another rank's process ends
 * without closing (killed, crashed, exited) or stops answering for {@link IrisConfig#watchdogTimeout()},
 * this rank's device waits stop within about a millisecond instead of at their deadline, host-side waits
 * end, and {@link #synchronize}, the barriers and the host-side collectives raise
 * {@link IrisRankLostException} naming the lost rank. After that the instance can only be closed.
 */
public final class Iris implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Iris.class);
    /**
     * A dead peer breaks the rendezvous at about the moment the watchdog notices it; a failed
     * host-side step waits this long for the watchdog's verdict, which names the rank.
     */
    private static final Duration LOSS_VERDICT_WAIT = Duration.ofSeconds(1);

    private final IrisConfig config;
    private final int rank;
    private final int world;
    private final int device;
    private final RendezvousConfig rendezvousConfig;
    private final Rendezvous rendezvous;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object statusLock = new Object();  // the watchdog's thread writes the abort word
    private boolean statusReleased;                  // guarded by statusLock
    private volatile RankWatchdog watchdog;
    private final List<AutoCloseable> toRelease = new ArrayList<>();  // closed in reverse order
    private final Map<Class<?>, AutoCloseable> attachments = new LinkedHashMap<>();  // guarded by itself
    private DeviceProperties deviceProperties;
    private Stream stream;
    private MappedHostMemory status;
    private long heapBase;
    private NodeLayout nodes;
    private Team worldTeam;
    private Team nodeTeam;
    private Team railTeam;
    private long[] peerMappings;   // by node index
    private int[] peerDevices;
    private String[] pciAddresses;
    private int ranksOnThisGpu;
    private int maxRanksPerGpu;
    private DeviceContext deviceContext;
    private final BarrierSlots barrierSlots = new BarrierSlots();
    private CoreKernels kernels;
    private SymmetricHeap heap;

    private Iris(IrisConfig config, int device) {
        this.config = config;
        this.device = device;
        this.rank = config.rank();
        this.world = config.worldSize();
        NativeCalls.setRank(rank);
        this.rendezvousConfig = new RendezvousConfig(rank, world,
                config.rankEnvironment().masterAddr(), config.rankEnvironment().masterPort(),
                config.rankEnvironment().jobToken(), config.rendezvousTimeout(), 16 << 20);
        this.rendezvous = Rendezvous.connect(rendezvousConfig);
    }

    /** Joins the job this process's environment describes (see {@link IrisConfig#fromEnvironment()}). */
    public static Iris init() {
        return init(IrisConfig.fromEnvironment());
    }

    /** Joins the job with an explicit configuration. Collective: every rank calls it. */
    public static Iris init(IrisConfig config) {
        NativeCalls.setRank(config.rank());
        NativeLibrary.ensureAvailable();
        int device = config.deviceAmong(visibleGpus(config.rank()));
        Gpu.setDevice(device);
        Iris iris = new Iris(config, device);
        try {
            iris.start();
            return iris;
        } catch (RuntimeException | Error e) {
            combine(e, iris.releaseAll());
            throw e;
        }
    }

    /** The GPUs this process sees; none is an error that says so, not a driver-version riddle. */
    private static int visibleGpus(int rank) {
        Gpu.GpuProbe probe = Gpu.probe();
        if (probe.deviceCount() < 1) {
            throw new IrisException("rank " + rank + ": no GPU is visible to this process: " + probe.reason());
        }
        return probe.deviceCount();
    }

    private void start() {
        deviceProperties = Gpu.properties(device);
        BuiltArchitectures.requireSupported(rank, Gpu.platform(), deviceProperties);
        stream = track(Stream.create());
        status = MappedHostMemory.allocate(DeviceStatusRecord.BYTES);
        toRelease.add(() -> {
            synchronized (statusLock) {
                statusReleased = true;
                status.close();
            }
        });

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

        int nodeSize = nodeTeam.size();
        long[] bases = new long[nodeSize];
        for (int i = 0; i < nodeSize; i++) {
            bases[i] = i == nodeTeam.index() ? heapBase : peerMappings[i];
        }
        deviceContext = new DeviceContext(nodeTeam.index(), nodeSize, config.heapSize(), config.deviceTimeout().toNanos(),
                status.address(), heapBase + BarrierSlots.flagsOffset(0), heapBase + BarrierSlots.epochOffset(0), bases);
        kernels = track(new CoreKernels(deviceProperties.multiprocessorCount(), config.checked()));
        heap = new SymmetricHeap(this, heapBase, config.heapSize());
        watchdog = track(RankWatchdog.start(rendezvous, rendezvousConfig, config.watchdogTimeout(), this::onRankLost));
        // Nobody touches a peer's heap before every rank has mapped every heap.
        rendezvous.barrier();
        LOG.info("rank {}/{}{}: {} on GPU {} ({}, {}, {} SMs){}, heap {} MiB, {}{}", rank, world,
                nodes.nodeCount() > 1 ? " (node " + nodes.nodeIndex() + " of " + nodes.nodeCount() + ", index "
                        + nodeTeam.index() + " of " + nodeTeam.size() + ")" : "",
                Gpu.runtimeDescription(), device, deviceProperties.pciAddress(), deviceProperties.name(), deviceProperties.multiprocessorCount(),
                ranksOnThisGpu > 1 ? ", shared by " + ranksOnThisGpu + " ranks (correct, but not for timing)" : "",
                config.heapSize() >> 20, config.rankEnvironment().source(),
                config.checked() ? ", checked mode (allocations compared across ranks, bounds-checked device code)" : "");
    }

    /**
     * Every rank announces its node and exports its heap; each maps the heaps of its node's ranks
     * (see {@link #node()}), the ranks that CUDA IPC can reach. GPUs are told apart by host and
     * PCI address, not by index, since ranks may see different {@code CUDA_VISIBLE_DEVICES}. Ranks
     * on the same GPU map each other's heaps through CUDA IPC like any peer; the GPU time-slices
     * their kernels.
     */
    private void exchangeHeaps() {
        String nodeKey = NodeKey.of(System.getenv(), config.rankEnvironment(), HostName.local());
        byte[][] keyBytes = rendezvous.allGather(nodeKey.getBytes(StandardCharsets.UTF_8));
        HeapAnnouncement me = new HeapAnnouncement(IpcHandles.export(heapBase), config.heapSize(),
                deviceProperties.pciAddress(), HostName.local());
        byte[][] all = rendezvous.allGather(me.encode());
        HeapAnnouncement[] announced = new HeapAnnouncement[world];
        String[] keys = new String[world];
        String[] hosts = new String[world];
        for (int r = 0; r < world; r++) {
            announced[r] = HeapAnnouncement.decode(all[r]);
            keys[r] = new String(keyBytes[r], StandardCharsets.UTF_8);
            hosts[r] = announced[r].host();
            if (announced[r].heapSize() != config.heapSize()) {
                throw new IrisException("rank " + rank + ": rank " + r + " has a heap of " + announced[r].heapSize()
                        + " bytes, this rank " + config.heapSize() + "; IRIS_HEAP_SIZE must agree on every rank");
            }
        }
        nodes = NodeLayout.of(keys, hosts, rank);
        worldTeam = nodes.world();
        nodeTeam = nodes.node();
        railTeam = nodes.rail();
        // Every rank checks every node, so that all fail alike rather than some waiting for the others.
        if (nodes.maxNodeSize() > DeviceContext.MAX_RANKS) {
            throw new IrisException("rank " + rank + ": a node of this job holds " + nodes.maxNodeSize()
                    + " ranks, more than the " + DeviceContext.MAX_RANKS + " one node supports (one device context"
                    + " addresses at most that many heaps); start more nodes, or fewer ranks per node");
        }
        int nodeSize = nodeTeam.size();
        HeapAnnouncement[] peers = new HeapAnnouncement[nodeSize];
        for (int i = 0; i < nodeSize; i++) {
            peers[i] = announced[nodeTeam.worldRank(i)];
        }
        // Device indexes matter only for peers on other GPUs; asking every GPU for its properties
        // costs start-up time that a job on one GPU need not pay.
        boolean otherGpus = Arrays.stream(peers).anyMatch(p -> !p.sameGpuAs(me));
        List<String> localPci = otherGpus ? localPciAddresses() : List.of();
        peerMappings = new long[nodeSize];
        peerDevices = new int[nodeSize];
        pciAddresses = new String[nodeSize];
        for (int i = 0; i < nodeSize; i++) {
            int r = nodeTeam.worldRank(i);
            pciAddresses[i] = peers[i].pciAddress();
            peerDevices[i] = peers[i].sameGpuAs(me) ? device : localPci.indexOf(pciAddresses[i]);
            if (r == rank) {
                continue;
            }
            if (!peers[i].sameGpuAs(me) && peerDevices[i] >= 0) {
                if (!Gpu.canAccessPeer(device, peerDevices[i])) {
                    throw new IrisException("rank " + rank + ": GPU " + me.pciAddress() + " cannot access GPU "
                            + pciAddresses[i] + " of rank " + r + " (no peer-to-peer path), so the symmetric heap cannot map it");
                }
                if (!Gpu.peerAtomicsNative(device, peerDevices[i])) {
                    // Flags, inline-flag packets and remote atomics are single-copy atomic only where the
                    // link makes peer atomics native; elsewhere a waiter could read a torn packet.
                    throw new IrisException("rank " + rank + ": atomics from GPU " + me.pciAddress()
                            + " on GPU " + pciAddresses[i] + " of rank " + r + " are not native (a PCIe link, no NVLink);"
                            + " the device API's flags and remote atomics need native peer atomics");
                }
            }
            final int peer = r;
            final int index = i;
            try {
                peerMappings[i] = IpcHandles.open(peers[i].ipcHandle(), r);
            } catch (IrisException e) {
                if (peerDevices[i] < 0) {
                    throw new IrisException("rank " + rank + ": cannot map the heap of rank " + r + ", whose GPU "
                            + pciAddresses[i] + " this process does not see (CUDA_VISIBLE_DEVICES); every rank must see"
                            + " every GPU of its node", e);
                }
                throw e;
            }
            toRelease.add(() -> IpcHandles.close(peerMappings[index], peer));
        }
        // Counted over the whole job: simulated nodes on one machine still share its GPUs.
        ranksOnThisGpu = (int) Arrays.stream(announced).filter(me::sameGpuAs).count();
        maxRanksPerGpu = Arrays.stream(announced)
                .collect(Collectors.groupingBy(p -> p.host() + "/" + p.pciAddress(), Collectors.counting()))
                .values().stream().mapToInt(Long::intValue).max().orElse(1);
    }

    /** The PCI address of every GPU this process sees, by index. */
    private static List<String> localPciAddresses() {
        List<String> pci = new ArrayList<>();
        for (int d = 0, n = Gpu.deviceCount(); d < n; d++) {
            pci.add(Gpu.properties(d).pciAddress());
        }
        return pci;
    }

    private <T extends AutoCloseable> T track(T resource) {
        toRelease.add(resource);
        return resource;
    }

    // ---- identity -------------------------------------------------------------------------------

    /** This rank in the whole job (the world team): what launchers number and the rendezvous uses. */
    public int rank() {
        return rank;
    }

    /** Number of ranks in the whole job, on every node. */
    public int worldSize() {
        return world;
    }

    /** Every rank of the job; this rank's index is {@link #rank()}. */
    public Team world() {
        return worldTeam;
    }

    /**
     * The ranks of this rank's node, which its symmetric heap spans: device code sees this team
     * ({@code ctx.rank} is {@code node().index()}, {@code ctx.world} is {@code node().size()}), and
     * the heap's remote operations ({@link RemoteTile}, {@link SymTensor#deviceAddress(int)},
     * {@link DeviceContext}), the device barriers and the collectives and fused operations address
     * its members by their index in it. On a job of one node it is the world, index for index.
     *
     * <pre>{@code
     * Team node = iris.node();
     * int right = (node.index() + 1) % node.size();        // a node rank: the heap reaches it
     * t.on(right).storeRemote(mine);
     * log.info("wrote to world rank {}", node.worldRank(right));
     * }</pre>
     */
    public Team node() {
        return nodeTeam;
    }

    /** The ranks at this rank's node index on every node (one rank per node): the cross-node team. */
    public Team rail() {
        return railTeam;
    }

    /** Number of nodes of the job. */
    public int nodeCount() {
        return nodes.nodeCount();
    }

    /** This rank's node, in {@code [0, nodeCount())}: nodes are numbered by their lowest world rank. */
    public int nodeIndex() {
        return nodes.nodeIndex();
    }

    /** The GPU this rank drives, as an index among the GPUs this process sees. */
    public int device() {
        return device;
    }

    /**
     * The GPU that node rank {@code r} ({@link #node()}'s index) drives, as an index among the GPUs
     * this process sees (for copy-engine baselines); -1 when this process does not see it.
     */
    public int deviceOf(int r) {
        checkNodeRank(r, "deviceOf");
        return peerDevices[r];
    }

    /** The PCI address ("0000:1b:00") of the GPU that node rank {@code r} drives. */
    public String pciAddressOf(int r) {
        checkNodeRank(r, "pciAddressOf");
        return pciAddresses[r];
    }

    /**
     * How many ranks of the job drive this rank's GPU: 1 normally, more where ranks share GPUs
     * (then the GPU time-slices their kernels: results are right, timings are not comparable).
     */
    public int ranksOnThisGpu() {
        return ranksOnThisGpu;
    }

    /**
     * The most ranks on any one GPU of the job; a benchmark reports no comparison when this is
     * above 1. Every rank returns the same value.
     */
    public int maxRanksPerGpu() {
        return maxRanksPerGpu;
    }

    /** True when two or more ranks of the job drive the same GPU. */
    public boolean sharesGpus() {
        return maxRanksPerGpu() > 1;
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

    /**
     * What kernels need to reach the heap of every rank of this node ({@link #node()}): pass
     * {@code bytes()} as their first argument.
     */
    public DeviceContext deviceContext() {
        ensureOpen("deviceContext");
        return deviceContext;
    }

    /**
     * The resource of class {@code type} attached to this instance, made by {@code factory} on the
     * first call and closed with this instance: first thing in {@link #close()}, before the heap
     * goes, in reverse order of attachment. For libraries built on Iris that keep one resource per
     * job, such as iris-kernels' NCCL communicators. Collective where the factory is: every rank
     * asks at the same point of its program.
     *
     * <pre>{@code
     * NcclTeams nccl = iris.attached(NcclTeams.class, () -> NcclTeams.create(iris));
     * }</pre>
     *
     * @throws IllegalStateException after close, or when the factory gives null or an object of another class
     */
    public <T extends AutoCloseable> T attached(Class<T> type, Supplier<T> factory) {
        ensureOpen("attached");
        synchronized (attachments) {
            AutoCloseable existing = attachments.get(type);
            if (existing == null) {
                existing = factory.get();
                if (!type.isInstance(existing)) {
                    throw new IllegalStateException("rank " + rank + ": attached(" + type.getName() + "): the factory gave "
                            + existing + ", expected an instance of that class");
                }
                attachments.put(type, existing);
            }
            return type.cast(existing);
        }
    }

    /** Closes the attachments, newest first; returns the first failure with later ones suppressed. */
    private Throwable closeAttachments() {
        List<AutoCloseable> all;
        synchronized (attachments) {
            all = new ArrayList<>(attachments.values());
            attachments.clear();
        }
        Throwable failure = null;
        for (int i = all.size() - 1; i >= 0; i--) {
            try {
                all.get(i).close();
            } catch (Exception e) {
                failure = combine(failure, e);
            }
        }
        return failure;
    }

    CoreKernels kernels() {
        return kernels;
    }

    Rendezvous rendezvous() {
        return rendezvous;
    }

    // ---- lost ranks ------------------------------------------------------------------------------

    /** The watchdog's thread: a peer is gone. Stop this rank's device waits and host-side waits. */
    private void onRankLost(RankWatchdog.Loss loss) {
        synchronized (statusLock) {
            if (!statusReleased) {
                DeviceStatusRecord.abort(status.buffer(), loss.rank());
            }
        }
        rendezvous.close();  // a host-side step waiting for the lost rank ends now, not at its timeout
    }

    /**
     * The first rank this rank's watchdog found gone, if any: after an {@link IrisRankLostException},
     * every collective call fails at once, naming it.
     *
     * <pre>{@code
     * iris.lostRank().ifPresent(r -> log.error("rank {} is gone; shutting down", r));
     * }</pre>
     */
    public OptionalInt lostRank() {
        RankWatchdog.Loss loss = loss();
        return loss == null ? OptionalInt.empty() : OptionalInt.of(loss.rank());
    }

    /** The watchdog's first loss, with its reason, or null. */
    private RankWatchdog.Loss loss() {
        RankWatchdog w = watchdog;
        return w == null ? null : w.loss();
    }

    private IrisRankLostException lossException(String op, RankWatchdog.Loss loss, Throwable cause) {
        return new IrisRankLostException("rank " + rank + ": " + op + ": " + loss.describe()
                + "; the job cannot go on without it", rank, loss.rank(), cause);
    }

    private void ensureNoLoss(String op) {
        RankWatchdog.Loss loss = loss();
        if (loss != null) {
            throw lossException(op, loss, null);
        }
    }

    /** A host-side collective step; a failure caused by a lost rank is reported as that loss. */
    private <T> T overRendezvous(String op, Supplier<T> step) {
        ensureOpen(op);
        ensureNoLoss(op);
        try {
            return step.get();
        } catch (IrisException e) {
            RankWatchdog.Loss loss = watchdog == null ? null : watchdog.awaitLoss(LOSS_VERDICT_WAIT);
            if (loss != null) {
                throw lossException(op, loss, e);
            }
            throw e;
        }
    }

    // ---- synchronization ------------------------------------------------------------------------

    /**
     * Device-side barrier of the node's ranks ({@link #node()}: all ranks on a job of one node),
     * enqueued on the default stream (returns at once). Ranks of other nodes are met through
     * {@link #hostBarrier()}.
     */
    public void barrier() {
        ensureOpen("barrier");
        barrier(stream);
    }

    /**
     * Device-side barrier on {@code s}: work enqueued after it on any rank runs after work enqueued
     * before it on every rank, and memory written before it is visible after it. A peer that does
     * not arrive within the device timeout makes the next {@link #synchronize} throw. These
     * barriers share one state: where two streams may run barriers at the same time, give each
     * its own {@link #newBarrier()}.
     */
    public void barrier(Stream s) {
        barrier(deviceContext, s);
    }

    void barrier(DeviceContext context, Stream s) {
        ensureOpen("barrier");
        ensureNoLoss("barrier");
        kernels.barrier(context, s);
    }

    /**
     * Collective: a device barrier with state of its own, for a stream or an operation whose
     * barriers may overlap with others on the GPU (see {@link DeviceBarrier}). Every rank creates
     * its barriers in the same order.
     */
    public DeviceBarrier newBarrier() {
        ensureOpen("newBarrier");
        return DeviceBarrier.create(this, barrierSlots, deviceContext, heapBase);
    }

    void releaseBarrier(int slot) {
        barrierSlots.release(slot);
    }

    /**
     * Waits for the default stream and raises any error a kernel recorded; raises
     * {@link IrisRankLostException} once a peer rank is lost.
     */
    public void synchronize() {
        ensureOpen("synchronize");
        synchronize(stream);
    }

    public void synchronize(Stream s) {
        ensureOpen("synchronize");
        s.synchronize();
        checkDeviceStatus();
        ensureNoLoss("synchronize");
    }

    /** Raises what a kernel recorded in this rank's status (e.g. a wait that timed out). */
    public void checkDeviceStatus() {
        RankWatchdog.Loss loss = loss();
        DeviceStatusRecord.check(status.buffer(), nodeTeam, config.deviceTimeout().toMillis(), Iris::readDeviceString,
                loss == null ? null : loss.reason() + " (noticed by rank " + loss.reportedBy() + ")");
    }

    /**
     * A NUL-terminated string in device memory (a checked kernel's file and function name), read a
     * byte at a time so that nothing past its end is touched; null if it cannot be read.
     */
    private static String readDeviceString(long address, int maxChars) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        try (Stream s = Stream.create(); BytePointer one = new BytePointer(1)) {
            for (int i = 0; i < maxChars; i++) {
                Memcpy.deviceToHost(one, address + i, 1, s);
                s.synchronize();
                byte b = one.get(0);
                if (b == 0) {
                    break;
                }
                text.write(b);
            }
        } catch (RuntimeException unreadable) {
            return null;
        }
        return text.toString(StandardCharsets.UTF_8);
    }

    /** Host-side barrier over the rendezvous (no GPU work involved). */
    public void hostBarrier() {
        overRendezvous("hostBarrier", () -> {
            rendezvous.barrier();
            return null;
        });
    }

    /** Host-side broadcast of bytes from {@code root}; other ranks' arguments are ignored. */
    public byte[] broadcast(byte[] value, int root) {
        ensureOpen("broadcast");
        checkRank(root, "root");
        return overRendezvous("broadcast", () -> rendezvous.broadcast(value, root));
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
        return overRendezvous("allGather", () -> rendezvous.allGather(value));
    }

    void checkRank(int r, String argument) {
        if (r < 0 || r >= world) {
            throw new IllegalArgumentException("rank " + rank + ": " + argument + " " + r + " is out of range [0, " + world + ")");
        }
    }

    /**
     * Rejects a rank that is not a node rank: the heap's operations number the node's ranks
     * {@code [0, node().size())}, which on a job of several nodes are not world ranks.
     */
    void checkNodeRank(int r, String call) {
        if (r < 0 || r >= nodeTeam.size()) {
            throw new IllegalArgumentException("rank " + rank + ": " + call + ": rank " + r + " is out of range: not a rank of this node;"
                    + " the symmetric heap spans " + nodeTeam.name() + ", whose ranks are addressed by their index in [0, "
                    + nodeTeam.size() + ")" + (nodes.nodeCount() > 1 ? " (world ranks "
                    + Arrays.toString(nodeTeam.worldRanks()) + "; iris.node().indexOf(worldRank) gives the index)" : ""));
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
     * are released even when the meeting fails; that failure is then rethrown, unless a lost rank
     * caused it (a lost rank was raised by the operation that noticed it, and logged by the watchdog:
     * after it, close only releases).
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
            if (loss() == null) {
                rendezvous.barrier();
            }
        } catch (IrisRankLostException lost) {
            // reported where it was noticed; nothing to meet
        } catch (RuntimeException e) {
            RankWatchdog.Loss loss = watchdog == null ? null : watchdog.awaitLoss(LOSS_VERDICT_WAIT);
            if (loss == null) {
                failure = e;
            }
        }
        failure = combine(failure, closeAttachments());
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
        return "Iris(rank " + rank + "/" + world + ", GPU " + device + (closed.get() ? ", closed" : "") + ")";
    }
}

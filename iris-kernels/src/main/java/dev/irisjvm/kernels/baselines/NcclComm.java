package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.nccl.NcclTypes;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.IntSupplier;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

/**
 * NCCL over all ranks, the reference the GPU tests and the benchmarks (iris-bench) compare with,
 * through the JavaCPP CUDA presets: point-to-point send/recv and the collectives on device addresses, enqueued on this library's stream so that CUDA events and graph
 * capture treat them like the iris kernels; all-to-all is a group of ncclSend/ncclRecv to every
 * rank, itself included, as nccl-tests does it. Rank 0 makes the unique id, {@link Iris#broadcast(byte[], int)} carries its
 * 128 bytes, every rank calls ncclCommInitRank. Where NCCL cannot be loaded or initialized on some
 * rank, every rank gets an unavailable instance that says why (decided together, so that no rank
 * waits in ncclCommInitRank for one that gave up). NVLS (multicast) must be off:
 * NCCL_NVLS_ENABLE=0, which the launcher sets.
 *
 * <p>Buffers are device addresses (symmetric tensors' {@code deviceAddress()}); the stream is this
 * library's, handed over as {@code new CUstream_st(new DevicePointer(stream.nativeHandle()))}.
 */
public final class NcclComm implements AutoCloseable {
    private static final int UNIQUE_ID_BYTES = 128;

    private final ncclComm comm;
    private final String reason;
    private final String version;
    private final int rank;
    private final int world;

    private NcclComm(Iris iris, ncclComm comm, String reason, String version) {
        this.comm = comm;
        this.reason = reason;
        this.version = version;
        this.rank = iris.rank();
        this.world = iris.worldSize();
    }

    /** Whether the environment says IRIS_TEST_NCCL=off: the GPU tests then run without their NCCL comparisons. */
    public static boolean switchedOffByEnvironment() {
        return "off".equalsIgnoreCase(String.valueOf(System.getenv("IRIS_TEST_NCCL")).trim());
    }

    /** An instance that was never opened (a benchmark run without its NCCL baseline). */
    public static NcclComm disabled(Iris iris, String why) {
        return new NcclComm(iris, null, why, null);
    }

    /** Collective. */
    public static NcclComm open(Iris iris) {
        String mine = null;
        String version = null;
        String nvls = System.getenv("NCCL_NVLS_ENABLE");
        if (!"0".equals(nvls)) {
            mine = "NCCL_NVLS_ENABLE is " + (nvls == null ? "unset" : "'" + nvls + "'") + "; it must be 0 (bin/iris-run sets it)";
        } else {
            try {
                Loader.load(nccl.class);
                int[] v = new int[1];
                check(nccl.ncclGetVersion(v), "ncclGetVersion");
                version = formatVersion(v[0]);
            } catch (Throwable t) {  // UnsatisfiedLinkError, NoClassDefFoundError, ...: recorded, not thrown
                mine = "cannot load NCCL: " + t;
            }
        }
        if (mine == null) {
            mine = sharedGpuProblem(iris);
        }
        String reason = firstReason(iris, mine);
        if (reason != null) {
            return new NcclComm(iris, null, reason, version);
        }
        byte[] id = new byte[UNIQUE_ID_BYTES + 1];
        if (iris.rank() == 0) {
            ncclUniqueId u = new ncclUniqueId();
            int status = nccl.ncclGetUniqueId(u);
            if (status == nccl.ncclSuccess) {
                id[0] = 1;
                for (int k = 0; k < UNIQUE_ID_BYTES; k++) id[1 + k] = u.internal(k);
            } else {
                byte[] text = ("ncclGetUniqueId failed on rank 0: " + errorString(status)).getBytes(StandardCharsets.UTF_8);
                id = ByteBuffer.allocate(1 + text.length).put((byte) 0).put(text).array();
            }
        }
        id = iris.broadcast(id, 0);
        if (id[0] == 0) {
            return new NcclComm(iris, null, new String(id, 1, id.length - 1, StandardCharsets.UTF_8), version);
        }
        ncclUniqueId u = new ncclUniqueId();
        for (int k = 0; k < UNIQUE_ID_BYTES; k++) u.internal(k, id[1 + k]);
        ncclComm c = new ncclComm();
        int status = nccl.ncclCommInitRank(c, iris.worldSize(), u, iris.rank());
        String failed = status == nccl.ncclSuccess ? null : "ncclCommInitRank failed on rank " + iris.rank() + ": " + errorString(status);
        reason = firstReason(iris, failed);
        if (reason != null) {
            if (failed == null) nccl.ncclCommDestroy(c);
            return new NcclComm(iris, null, reason, version);
        }
        return new NcclComm(iris, c, null, version);
    }

    /**
     * Collective. NCCL refuses two ranks of one host on one GPU unless each claims a host of its
     * own ({@code NCCL_HOSTID}, which bin/iris-run sets where ranks share a GPU); this says so
     * before ncclCommInitRank would fail with a less clear message.
     */
    private static String sharedGpuProblem(Iris iris) {
        String hostId = String.valueOf(System.getenv("NCCL_HOSTID"));
        byte[][] all = iris.allGather(hostId.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (r != iris.rank() && iris.pciAddressOf(r).equals(iris.pciAddressOf(iris.rank()))
                    && hostId.equals(new String(all[r], StandardCharsets.UTF_8))) {
                return "shares GPU " + iris.pciAddressOf(r) + " with rank " + r + " under the same NCCL_HOSTID (" + hostId
                        + "); NCCL needs a distinct NCCL_HOSTID per rank there (bin/iris-run sets one where ranks share a GPU)";
            }
        }
        return null;
    }

    /**
     * Collective: every rank's reason to give up (or null), gathered; the first one with its rank
     * ("rank r: ..."), or null where no rank has one.
     */
    public static String firstReason(Iris iris, String mine) {
        byte[][] all = iris.allGather(mine == null ? new byte[0] : mine.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) return "rank " + r + ": " + new String(all[r], StandardCharsets.UTF_8);
        }
        return null;
    }

    /** Whether NCCL loaded and every rank's communicator was made; otherwise {@link #reason()} says why not. */
    public boolean available() {
        return comm != null;
    }

    /** Why NCCL is unavailable ("rank r: ..."), or null where {@link #available()}. */
    public String reason() {
        return reason;
    }

    /** "NCCL 2.28.3", or null if it was not loaded. */
    public String version() {
        return version;
    }

    /** 22803 -> "NCCL 2.28.3" (versions from 2.9 on encode major * 10000 + minor * 100 + patch). */
    public static String formatVersion(int code) {
        return "NCCL " + code / 10000 + "." + (code % 10000) / 100 + "." + code % 100;
    }

    /** The NCCL version without a communicator, or null if it cannot be loaded here. */
    public static String loadedVersion() {
        try {
            Loader.load(nccl.class);
            int[] v = new int[1];
            return nccl.ncclGetVersion(v) == nccl.ncclSuccess ? formatVersion(v[0]) : null;
        } catch (Throwable t) {
            return null;
        }
    }

    /** ncclAllReduce of {@code count} elements from {@code in} into {@code out}. */
    public void allReduce(long in, long out, long count, DType t, ReduceOp op, Stream s) {
        check(nccl.ncclAllReduce(ptr(in), ptr(out), count, NcclTypes.type(t), NcclTypes.op(op), comm(), cuda(s)), "ncclAllReduce");
    }

    /** ncclReduceScatter: each rank receives {@code recvCount} elements of the reduction. */
    public void reduceScatter(long in, long out, long recvCount, DType t, ReduceOp op, Stream s) {
        check(nccl.ncclReduceScatter(ptr(in), ptr(out), recvCount, NcclTypes.type(t), NcclTypes.op(op), comm(), cuda(s)), "ncclReduceScatter");
    }

    /** ncclAllGather: every rank's {@code sendCount} elements into {@code out}, in rank order. */
    public void allGather(long in, long out, long sendCount, DType t, Stream s) {
        check(nccl.ncclAllGather(ptr(in), ptr(out), sendCount, NcclTypes.type(t), comm(), cuda(s)), "ncclAllGather");
    }

    /** ncclSend of bytes (ncclUint8) to peer, in a group of one. */
    public void send(long buffer, long bytes, int peer, Stream s) {
        ncclComm c = comm();
        group("ncclSend", () -> nccl.ncclSend(ptr(buffer), bytes, nccl.ncclUint8, peer, c, cuda(s)));
    }

    /** ncclRecv of bytes (ncclUint8) from peer, in a group of one. */
    public void recv(long buffer, long bytes, int peer, Stream s) {
        ncclComm c = comm();
        group("ncclRecv", () -> nccl.ncclRecv(ptr(buffer), bytes, nccl.ncclUint8, peer, c, cuda(s)));
    }

    /**
     * Several ncclAllGather calls in one NCCL group (fused into one launch by NCCL): call i gathers
     * {@code sendCount} elements at {@code in[i]} of every rank into {@code out[i]}, rank r's at
     * {@code out[i] + r x sendCount} elements. With {@code out[i]} strided, this gathers into a
     * layout other than rank-major (e.g. one call per attention head).
     */
    public void groupAllGather(long[] in, long[] out, long sendCount, DType t, Stream s) {
        ncclComm c = comm();
        if (in.length != out.length) {
            throw new IllegalArgumentException("groupAllGather: " + in.length + " inputs but " + out.length + " outputs");
        }
        group("ncclAllGather (grouped)", () -> {
            int status = nccl.ncclSuccess;
            for (int i = 0; i < in.length && status == nccl.ncclSuccess; i++) {
                status = nccl.ncclAllGather(ptr(in[i]), ptr(out[i]), sendCount, NcclTypes.type(t), c, cuda(s));
            }
            return status;
        });
    }

    /** All-to-all of blocks of {@code countPerPeer} elements: block p of in goes to rank p's block rank of out. */
    public void allToAll(long in, long out, long countPerPeer, DType t, Stream s) {
        long[] counts = new long[world];
        long[] displs = new long[world];
        for (int p = 0; p < world; p++) {
            counts[p] = countPerPeer;
            displs[p] = p * countPerPeer;
        }
        allToAllV(in, counts, displs, out, counts, displs, t, s);
    }

    /** ncclBroadcast of {@code count} elements from rank {@code root}'s {@code send} into every rank's {@code recv}. */
    public void broadcast(long send, long recv, long count, DType t, int root, Stream s) {
        check(nccl.ncclBroadcast(ptr(send), ptr(recv), count, NcclTypes.type(t), root, comm(), cuda(s)), "ncclBroadcast");
    }

    /** All-to-all-v as grouped send / receive (counts and displacements in elements). */
    public void allToAllV(long in, long[] sendCounts, long[] sendDispls, long out, long[] recvCounts, long[] recvDispls, DType t, Stream s) {
        ncclComm c = comm();
        long es = t.byteSize();
        group("ncclSend/ncclRecv", () -> {
            int status = nccl.ncclSuccess;
            for (int p = 0; p < sendCounts.length && status == nccl.ncclSuccess; p++) {
                if (sendCounts[p] > 0) status = nccl.ncclSend(ptr(in + sendDispls[p] * es), sendCounts[p], NcclTypes.type(t), p, c, cuda(s));
                if (status == nccl.ncclSuccess && recvCounts[p] > 0)
                    status = nccl.ncclRecv(ptr(out + recvDispls[p] * es), recvCounts[p], NcclTypes.type(t), p, c, cuda(s));
            }
            return status;
        });
    }

    /**
     * {@code calls} (which stop at their first failure and return its status) in one NCCL group; the
     * group is ended whatever they returned, then the first failure is thrown, naming {@code what}.
     */
    private static void group(String what, IntSupplier calls) {
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = calls.getAsInt();
        int end = nccl.ncclGroupEnd();
        check(status, what);
        check(end, "ncclGroupEnd");
    }

    /** The communicator handle, for {@link NcclWindows}; throws where NCCL is unavailable. */
    ncclComm comm() {
        if (comm == null) throw new IllegalStateException("rank " + rank + ": NCCL is unavailable: " + reason);
        return comm;
    }

    private static Pointer ptr(long address) {
        return new DevicePointer(address);
    }

    private static CUstream_st cuda(Stream s) {
        return new CUstream_st(new DevicePointer(s.nativeHandle()));
    }

    private static void check(int status, String call) {
        if (status != nccl.ncclSuccess) throw new IllegalStateException(call + " failed: " + errorString(status));
    }

    static String errorString(int status) {
        try {
            return nccl.ncclGetErrorString(status).getString() + " (" + status + ")";
        } catch (RuntimeException e) {
            return "status " + status;
        }
    }

    @Override
    public void close() {
        if (comm != null) check(nccl.ncclCommDestroy(comm), "ncclCommDestroy");
    }
}

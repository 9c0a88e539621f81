package dev.irisjvm.bench.nccl;

import dev.irisjvm.bench.rma.DevicePointer;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Loader;

/**
 * The NCCL baseline of the sweeps: one communicator over all ranks (JavaCPP CUDA presets), with
 * point-to-point send/recv and the five collectives on device addresses, enqueued on this library's stream so
 * that CUDA events and graph capture treat them like the iris kernels. All-to-all is a group of
 * ncclSend/ncclRecv to every rank, itself included, as nccl-tests does it.
 *
 * <p>Opening is collective and never throws for a missing NCCL: where it cannot be loaded or
 * initialized on any rank, every rank gets an unavailable instance that says why. NVLS (multicast)
 * stays off: the communicator is only created when {@code NCCL_NVLS_ENABLE=0} (bin/iris-run sets it).
 *
 * <pre>{@code
 * try (Nccl n = Nccl.open(iris)) {
 *     if (n.available()) n.allReduce(in, out, count, DType.BF16, ReduceOp.SUM, iris.stream());
 * }
 * }</pre>
 */
public final class Nccl implements AutoCloseable {
    private static final int UNIQUE_ID_BYTES = 128;

    private final ncclComm comm;
    private final String reason;
    private final String version;
    private final int rank;
    private final int world;

    private Nccl(ncclComm comm, String reason, String version, int rank, int world) {
        this.comm = comm;
        this.reason = reason;
        this.version = version;
        this.rank = rank;
        this.world = world;
    }

    /** An instance that was never opened (--no-nccl). */
    public static Nccl disabled(Iris iris, String why) {
        return new Nccl(null, why, null, iris.rank(), iris.worldSize());
    }

    /** Collective: loads NCCL on every rank and creates one communicator of all ranks. */
    public static Nccl open(Iris iris) {
        int rank = iris.rank();
        int world = iris.worldSize();
        String mine = null;
        String version = null;
        String nvls = System.getenv("NCCL_NVLS_ENABLE");
        if (!"0".equals(nvls)) {
            mine = "NCCL_NVLS_ENABLE is " + (nvls == null ? "unset" : "'" + nvls + "'")
                    + ", must be 0 (NVLS/multicast must stay off; bin/iris-run sets it)";
        } else {
            try {
                Loader.load(nccl.class);
                int[] v = new int[1];
                check(nccl.ncclGetVersion(v), "ncclGetVersion");
                version = "NCCL " + v[0] / 10000 + "." + (v[0] % 10000) / 100 + "." + v[0] % 100;
            } catch (Throwable t) {   // UnsatisfiedLinkError, NoClassDefFoundError, ...: record, do not fail the sweep
                mine = "cannot load NCCL: " + oneLine(t);
            }
        }
        String reason = firstReason(iris, mine);
        if (reason != null) {
            return new Nccl(null, reason, version, rank, world);
        }
        byte[] message;
        if (rank == 0) {
            ncclUniqueId id = new ncclUniqueId();
            int status = nccl.ncclGetUniqueId(id);
            if (status == nccl.ncclSuccess) {
                message = new byte[1 + UNIQUE_ID_BYTES];
                message[0] = 1;
                for (int k = 0; k < UNIQUE_ID_BYTES; k++) {
                    message[1 + k] = id.internal(k);
                }
            } else {
                byte[] text = ("ncclGetUniqueId failed on rank 0: " + errorString(status)).getBytes(StandardCharsets.UTF_8);
                message = ByteBuffer.allocate(1 + text.length).put((byte) 0).put(text).array();
            }
        } else {
            message = new byte[0];
        }
        message = iris.broadcast(message, 0);
        if (message[0] == 0) {
            return new Nccl(null, new String(message, 1, message.length - 1, StandardCharsets.UTF_8), version, rank, world);
        }
        ncclUniqueId id = new ncclUniqueId();
        for (int k = 0; k < UNIQUE_ID_BYTES; k++) {
            id.internal(k, message[1 + k]);
        }
        ncclComm comm = new ncclComm();
        int status = nccl.ncclCommInitRank(comm, world, id, rank);
        String failed = status == nccl.ncclSuccess ? null : "ncclCommInitRank failed on rank " + rank + ": " + errorString(status);
        reason = firstReason(iris, failed);
        if (reason != null) {
            if (failed == null) {
                nccl.ncclCommDestroy(comm);
            }
            return new Nccl(null, reason, version, rank, world);
        }
        return new Nccl(comm, null, version, rank, world);
    }

    private static String firstReason(Iris iris, String mine) {
        byte[][] all = iris.allGather(mine == null ? new byte[0] : mine.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (all[r].length > 0) {
                return "rank " + r + ": " + new String(all[r], StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    public boolean available() {
        return comm != null;
    }

    /** Why NCCL is unavailable, or null. */
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

    /** ncclSend of bytes (ncclUint8) to peer, in a group of one. */
    public void send(long buffer, long bytes, int peer, Stream s) {
        requireOpen();
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = nccl.ncclSend(new DevicePointer(buffer), bytes, nccl.ncclUint8, peer, comm, cuda(s));
        int end = nccl.ncclGroupEnd();
        check(status, "ncclSend");
        check(end, "ncclGroupEnd");
    }

    /** ncclRecv of bytes (ncclUint8) from peer, in a group of one. */
    public void recv(long buffer, long bytes, int peer, Stream s) {
        requireOpen();
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = nccl.ncclRecv(new DevicePointer(buffer), bytes, nccl.ncclUint8, peer, comm, cuda(s));
        int end = nccl.ncclGroupEnd();
        check(status, "ncclRecv");
        check(end, "ncclGroupEnd");
    }

    /** ncclAllReduce of count elements. */
    public void allReduce(long in, long out, long count, DType t, ReduceOp op, Stream s) {
        requireOpen();
        check(nccl.ncclAllReduce(new DevicePointer(in), new DevicePointer(out), count, type(t), op(op), comm, cuda(s)),
                "ncclAllReduce");
    }

    /** ncclReduceScatter: out (recvCount elements) = the reduction of block rank of in (world x recvCount). */
    public void reduceScatter(long in, long out, long recvCount, DType t, ReduceOp op, Stream s) {
        requireOpen();
        check(nccl.ncclReduceScatter(new DevicePointer(in), new DevicePointer(out), recvCount, type(t), op(op), comm, cuda(s)),
                "ncclReduceScatter");
    }

    /** ncclAllGather: out (world x sendCount elements) = every rank's in, in rank order. */
    public void allGather(long in, long out, long sendCount, DType t, Stream s) {
        requireOpen();
        check(nccl.ncclAllGather(new DevicePointer(in), new DevicePointer(out), sendCount, type(t), comm, cuda(s)),
                "ncclAllGather");
    }

    /**
     * Several ncclAllGather calls in one NCCL group (fused into one launch by NCCL): call i gathers
     * {@code sendCount} elements at {@code in[i]} of every rank into {@code out[i]}, rank r's at
     * {@code out[i] + r x sendCount} elements. With {@code out[i]} strided, this gathers into a
     * layout other than rank-major (e.g. one call per attention head).
     */
    public void groupAllGather(long[] in, long[] out, long sendCount, DType t, Stream s) {
        requireOpen();
        if (in.length != out.length) {
            throw new IllegalArgumentException("groupAllGather: " + in.length + " inputs but " + out.length + " outputs");
        }
        int dt = type(t);
        CUstream_st stream = cuda(s);
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = nccl.ncclSuccess;
        for (int i = 0; i < in.length && status == nccl.ncclSuccess; i++) {
            status = nccl.ncclAllGather(new DevicePointer(in[i]), new DevicePointer(out[i]), sendCount, dt, comm, stream);
        }
        int end = nccl.ncclGroupEnd();
        check(status, "ncclAllGather (grouped)");
        check(end, "ncclGroupEnd");
    }

    /** ncclBroadcast of count elements from root's send buffer into every rank's out (in place when they are equal). */
    public void broadcast(long send, long out, long count, DType t, int root, Stream s) {
        requireOpen();
        check(nccl.ncclBroadcast(new DevicePointer(send), new DevicePointer(out), count, type(t), root, comm, cuda(s)),
                "ncclBroadcast");
    }

    /** All-to-all of blocks of {@code countPerPeer} elements: block p of in goes to rank p's block rank of out. */
    public void allToAll(long in, long out, long countPerPeer, DType t, Stream s) {
        requireOpen();
        long blockBytes = countPerPeer * t.byteSize();
        int dt = type(t);
        CUstream_st stream = cuda(s);
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = nccl.ncclSuccess;
        String failed = null;
        for (int p = 0; p < world && status == nccl.ncclSuccess; p++) {
            status = nccl.ncclSend(new DevicePointer(in + p * blockBytes), countPerPeer, dt, p, comm, stream);
            failed = "ncclSend to " + p;
            if (status == nccl.ncclSuccess) {
                status = nccl.ncclRecv(new DevicePointer(out + p * blockBytes), countPerPeer, dt, p, comm, stream);
                failed = "ncclRecv from " + p;
            }
        }
        int end = nccl.ncclGroupEnd();
        check(status, failed);
        check(end, "ncclGroupEnd");
    }

    static int type(DType t) {
        return switch (t) {
            case BF16 -> nccl.ncclBfloat16;
            case F16 -> nccl.ncclFloat16;
            case F32 -> nccl.ncclFloat32;
            default -> throw new IllegalArgumentException("no NCCL type for " + t + " in this sweep");
        };
    }

    static int op(ReduceOp op) {
        return switch (op) {
            case SUM -> nccl.ncclSum;
            case MAX -> nccl.ncclMax;
            case MIN -> nccl.ncclMin;
            case AVG -> nccl.ncclAvg;
        };
    }

    private static CUstream_st cuda(Stream stream) {
        return new CUstream_st(stream.handle());
    }

    private void requireOpen() {
        if (comm == null) {
            throw new IllegalStateException("rank " + rank + ": NCCL is unavailable: " + reason);
        }
    }

    private static void check(int status, String call) {
        if (status != nccl.ncclSuccess) {
            throw new IllegalStateException(call + " failed: " + errorString(status));
        }
    }

    private static String errorString(int status) {
        try {
            return nccl.ncclGetErrorString(status).getString() + " (" + status + ")";
        } catch (RuntimeException e) {
            return "status " + status;
        }
    }

    static String oneLine(Throwable t) {
        String m = t.getMessage();
        return (t.getClass().getSimpleName() + (m == null ? "" : ": " + m)).replace('\n', ' ');
    }

    /** Destroys the communicator (after the caller has synchronized the streams it used). */
    @Override
    public void close() {
        if (comm != null) {
            check(nccl.ncclCommDestroy(comm), "ncclCommDestroy");
        }
    }
}

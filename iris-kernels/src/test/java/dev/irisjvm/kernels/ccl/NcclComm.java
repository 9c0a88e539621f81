package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

/**
 * NCCL over all ranks, the reference implementation the collectives are compared with, through the
 * JavaCPP CUDA presets. Rank 0 makes the unique id, {@link Iris#broadcast(byte[], int)} carries its
 * 128 bytes, every rank calls ncclCommInitRank. Where NCCL cannot be loaded or initialized on some
 * rank, every rank gets an unavailable instance that says why (decided together, so that no rank
 * waits in ncclCommInitRank for one that gave up). NVLS (multicast) must be off:
 * NCCL_NVLS_ENABLE=0, which the launcher sets.
 *
 * <p>Buffers are device addresses (symmetric tensors' {@code deviceAddress()}); the stream is this
 * library's, handed over as {@code new CUstream_st(stream.handle())}.
 */
public final class NcclComm implements AutoCloseable {
    private static final int UNIQUE_ID_BYTES = 128;

    private final ncclComm comm;
    private final String reason;
    private final String version;

    private NcclComm(ncclComm comm, String reason, String version) {
        this.comm = comm;
        this.reason = reason;
        this.version = version;
    }

    /** A JavaCPP pointer at a device address; owns and frees nothing. */
    public static final class DevicePointer extends Pointer {
        public DevicePointer(long address) {
            this.address = address;
        }
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
                version = "NCCL " + v[0] / 10000 + "." + (v[0] % 10000) / 100 + "." + v[0] % 100;
            } catch (Throwable t) {
                mine = "cannot load NCCL: " + t;
            }
        }
        String reason = firstReason(iris, mine);
        if (reason != null) {
            return new NcclComm(null, reason, version);
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
            return new NcclComm(null, new String(id, 1, id.length - 1, StandardCharsets.UTF_8), version);
        }
        ncclUniqueId u = new ncclUniqueId();
        for (int k = 0; k < UNIQUE_ID_BYTES; k++) u.internal(k, id[1 + k]);
        ncclComm c = new ncclComm();
        int status = nccl.ncclCommInitRank(c, iris.worldSize(), u, iris.rank());
        String failed = status == nccl.ncclSuccess ? null : "ncclCommInitRank failed on rank " + iris.rank() + ": " + errorString(status);
        reason = firstReason(iris, failed);
        if (reason != null) {
            if (failed == null) nccl.ncclCommDestroy(c);
            return new NcclComm(null, reason, version);
        }
        return new NcclComm(c, null, version);
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

    public boolean available() {
        return comm != null;
    }

    public String reason() {
        return reason;
    }

    public String version() {
        return version;
    }

    static int type(DType t) {
        return switch (t) {
            case BF16 -> nccl.ncclBfloat16;
            case F16 -> nccl.ncclFloat16;
            case F32 -> nccl.ncclFloat32;
            case F64 -> nccl.ncclFloat64;
            case I32 -> nccl.ncclInt32;
            case I64 -> nccl.ncclInt64;
            case U8 -> nccl.ncclUint8;
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

    public void allReduce(long in, long out, long count, DType t, ReduceOp op, Stream s) {
        check(nccl.ncclAllReduce(ptr(in), ptr(out), count, type(t), op(op), comm(), cuda(s)), "ncclAllReduce");
    }

    public void reduceScatter(long in, long out, long recvCount, DType t, ReduceOp op, Stream s) {
        check(nccl.ncclReduceScatter(ptr(in), ptr(out), recvCount, type(t), op(op), comm(), cuda(s)), "ncclReduceScatter");
    }

    public void allGather(long in, long out, long sendCount, DType t, Stream s) {
        check(nccl.ncclAllGather(ptr(in), ptr(out), sendCount, type(t), comm(), cuda(s)), "ncclAllGather");
    }

    public void broadcast(long send, long recv, long count, DType t, int root, Stream s) {
        check(nccl.ncclBroadcast(ptr(send), ptr(recv), count, type(t), root, comm(), cuda(s)), "ncclBroadcast");
    }

    /** All-to-all-v as grouped send / receive (counts and displacements in elements). */
    public void allToAllV(long in, long[] sendCounts, long[] sendDispls, long out, long[] recvCounts, long[] recvDispls, DType t, Stream s) {
        long es = t.byteSize();
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = nccl.ncclSuccess;
        for (int p = 0; p < sendCounts.length && status == nccl.ncclSuccess; p++) {
            if (sendCounts[p] > 0) status = nccl.ncclSend(ptr(in + sendDispls[p] * es), sendCounts[p], type(t), p, comm(), cuda(s));
            if (status == nccl.ncclSuccess && recvCounts[p] > 0)
                status = nccl.ncclRecv(ptr(out + recvDispls[p] * es), recvCounts[p], type(t), p, comm(), cuda(s));
        }
        int end = nccl.ncclGroupEnd();
        check(status, "ncclSend/ncclRecv");
        check(end, "ncclGroupEnd");
    }

    private ncclComm comm() {
        if (comm == null) throw new IllegalStateException("NCCL is unavailable: " + reason);
        return comm;
    }

    private static Pointer ptr(long address) {
        return new DevicePointer(address);
    }

    private static CUstream_st cuda(Stream s) {
        return new CUstream_st(s.handle());
    }

    private static void check(int status, String call) {
        if (status != nccl.ncclSuccess) throw new IllegalStateException(call + " failed: " + errorString(status));
    }

    private static String errorString(int status) {
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

package dev.irisjvm.bench.rma;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Loader;

/**
 * An NCCL communicator over all ranks, for the baselines, through the JavaCPP CUDA presets. NCCL
 * is loaded lazily: where it cannot be loaded or initialized (on any rank), every rank gets an
 * unavailable instance that says why, and the other ops go on. NVLS (multicast) is never used:
 * the communicator is only created when {@code NCCL_NVLS_ENABLE=0} is set (bin/iris-run sets it).
 *
 * <pre>{@code
 * try (Nccl nccl = Nccl.open(iris)) {          // collective
 *     if (nccl.available()) nccl.allReduceBf16(in, out, count, iris.stream());
 *     else System.out.println(nccl.reason());
 * }
 * }</pre>
 *
 * <p>The stream handed to NCCL is this library's own (one driver CUstream), so CUDA events on it
 * time NCCL's kernels like any other work.
 */
public final class Nccl implements AutoCloseable {
    /** NCCL_UNIQUE_ID_BYTES. */
    static final int UNIQUE_ID_BYTES = 128;

    private final ncclComm comm;
    private final String reason;
    private final String version;

    private Nccl(ncclComm comm, String reason, String version) {
        this.comm = comm;
        this.reason = reason;
        this.version = version;
    }

    /** Collective: loads NCCL on every rank and creates one communicator of all ranks. */
    public static Nccl open(Iris iris) {
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
                version = formatVersion(v[0]);
            } catch (Throwable t) {  // UnsatisfiedLinkError, NoClassDefFoundError, ...: record, do not fail the sweep
                mine = "cannot load NCCL: " + Lockstep.oneLine(t);
            }
        }
        String reason = firstReason(iris, mine);
        if (reason != null) {
            return new Nccl(null, reason, version);
        }

        // Rank 0 creates the id; a leading status byte tells the others whether it could.
        byte[] message;
        if (iris.rank() == 0) {
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
            return new Nccl(null, new String(message, 1, message.length - 1, StandardCharsets.UTF_8), version);
        }
        ncclUniqueId id = new ncclUniqueId();
        for (int k = 0; k < UNIQUE_ID_BYTES; k++) {
            id.internal(k, message[1 + k]);
        }
        ncclComm comm = new ncclComm();
        int status = nccl.ncclCommInitRank(comm, iris.worldSize(), id, iris.rank());
        String failed = status == nccl.ncclSuccess ? null
                : "ncclCommInitRank failed on rank " + iris.rank() + ": " + errorString(status);
        reason = firstReason(iris, failed);
        if (reason != null) {
            if (failed == null) {
                nccl.ncclCommDestroy(comm);
            }
            return new Nccl(null, reason, version);
        }
        return new Nccl(comm, null, version);
    }

    /** The first rank's failure text (every rank learns it), or null when every rank succeeded. */
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

    /** "NCCL 2.28.3", or null if it could not be loaded. */
    public String version() {
        return version;
    }

    /** 22803 -> "NCCL 2.28.3" (versions from 2.9 on encode major * 10000 + minor * 100 + patch). */
    static String formatVersion(int code) {
        return "NCCL " + code / 10000 + "." + (code % 10000) / 100 + "." + code % 100;
    }

    /** ncclSend of bytes (ncclUint8) to peer, in a group of one. */
    public void send(long buffer, long bytes, int peer, Stream stream) {
        group(() -> nccl.ncclSend(new DevicePointer(buffer), bytes, nccl.ncclUint8, peer, comm, cuda(stream)), "ncclSend");
    }

    /** ncclRecv of bytes (ncclUint8) from peer, in a group of one. */
    public void recv(long buffer, long bytes, int peer, Stream stream) {
        group(() -> nccl.ncclRecv(new DevicePointer(buffer), bytes, nccl.ncclUint8, peer, comm, cuda(stream)), "ncclRecv");
    }

    /** Sum all-reduce of count bf16 elements, every rank. */
    public void allReduceBf16(long in, long out, long count, Stream stream) {
        requireOpen();
        check(nccl.ncclAllReduce(new DevicePointer(in), new DevicePointer(out), count, nccl.ncclBfloat16, nccl.ncclSum, comm,
                cuda(stream)), "ncclAllReduce");
    }

    private interface Call {
        int run();
    }

    private void group(Call call, String name) {
        requireOpen();
        check(nccl.ncclGroupStart(), "ncclGroupStart");
        int status = call.run();
        int end = nccl.ncclGroupEnd();
        check(status, name);
        check(end, "ncclGroupEnd");
    }

    private static CUstream_st cuda(Stream stream) {
        return new CUstream_st(stream.handle());
    }

    private void requireOpen() {
        if (comm == null) {
            throw new IllegalStateException("NCCL is unavailable: " + reason);
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

    /** Destroys the communicator (after the caller has synchronized its streams). */
    @Override
    public void close() {
        if (comm != null) {
            check(nccl.ncclCommDestroy(comm), "ncclCommDestroy");
        }
    }

    /** The NCCL version without a communicator, or null if it cannot be loaded here. */
    static String loadedVersion() {
        try {
            Loader.load(nccl.class);
            int[] v = new int[1];
            return nccl.ncclGetVersion(v) == nccl.ncclSuccess ? formatVersion(v[0]) : null;
        } catch (Throwable t) {
            return null;
        }
    }
}

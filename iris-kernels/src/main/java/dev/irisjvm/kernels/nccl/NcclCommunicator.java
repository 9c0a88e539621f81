package dev.irisjvm.kernels.nccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisTimeoutException;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * One NCCL communicator, non-blocking so that every wait on it has a deadline: init, split, a
 * collective that NCCL is still connecting for, and close each poll ncclCommGetAsyncError until
 * done or the deadline passes, and then abort the communicator and say which call and rank timed
 * out. Collectives are enqueued on the caller's stream, like this library's kernels.
 *
 * <pre>{@code
 * try (NcclCommunicator world = NcclCommunicator.initRank("world", id, 4, rank, rank, Duration.ofMinutes(2))) {
 *     world.allReduce(in, out, n, DType.F32, ReduceOp.SUM, stream);
 * }
 * }</pre>
 */
public final class NcclCommunicator implements AutoCloseable {
    static final int UNIQUE_ID_BYTES = 128;
    /** Between two polls of a communicator that is still busy: NCCL's own waits are of this order. */
    private static final long POLL_MILLIS = 1;

    private final ncclComm comm;
    private final String name;
    private final int worldRank;
    private final int size;
    private final int index;
    private final Duration timeout;
    private final AtomicBoolean closed = new AtomicBoolean();

    private NcclCommunicator(ncclComm comm, String name, int worldRank, int size, int index, Duration timeout) {
        this.comm = comm;
        this.name = name;
        this.worldRank = worldRank;
        this.size = size;
        this.index = index;
        this.timeout = timeout;
    }

    /**
     * Collective over the {@code size} ranks that share {@code uniqueId}: ncclCommInitRankConfig,
     * waited for at most {@code timeout}.
     *
     * @param worldRank this rank in the job, for messages
     * @throws IrisTimeoutException when a peer did not join in time (the communicator is aborted)
     * @throws IrisException naming the call, the rank and NCCL's error otherwise
     */
    public static NcclCommunicator initRank(String name, byte[] uniqueId, int size, int index, int worldRank,
                                            Duration timeout) {
        if (uniqueId.length != UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("rank " + worldRank + ": " + name + ": uniqueId must be "
                    + UNIQUE_ID_BYTES + " bytes, got " + uniqueId.length);
        }
        String call = "ncclCommInitRankConfig(" + name + ", " + size + " ranks, index " + index + ")";
        ncclComm comm = new ncclComm();
        try (ncclUniqueId id = new ncclUniqueId(); ncclConfig_t config = NcclConfig.nonBlocking()) {
            for (int k = 0; k < UNIQUE_ID_BYTES; k++) {
                id.internal(k, uniqueId[k]);
            }
            started(comm, nccl.ncclCommInitRankConfig(comm, size, id, index, config), call, worldRank);
        }
        awaitReady(comm, call, worldRank, timeout);
        return checked(new NcclCommunicator(comm, name, worldRank, size, index, timeout), call);
    }

    /**
     * Collective over this communicator: ncclCommSplit into the ranks of {@code color}, ordered by
     * {@code key}, waited for at most the communicator's timeout. The caller says what it expects
     * ({@code size} ranks, this one at {@code index}), and a split that disagrees is an error.
     */
    public NcclCommunicator split(String newName, int color, int key, int size, int index) {
        ensureOpen("split");
        String call = "ncclCommSplit(" + name + " -> " + newName + ", color " + color + ", key " + key + ")";
        // A non-blocking split writes the child's handle only when the parent is done with it (NCCL
        // issue 1472), so it goes to native memory of ours, not to a temporary of the JNI call, and
        // the parent is awaited before the child. Where the wait fails the slot is left allocated:
        // an aborted split might still write into it.
        PointerPointer<ncclComm> slot = new PointerPointer<>(1);
        slot.put(0, (Pointer) null);
        try (ncclConfig_t config = NcclConfig.nonBlocking()) {
            started(comm, nccl.ncclCommSplit(comm, color, key, slot, config), call, worldRank);
        }
        awaitReady(comm, call + " (parent)", worldRank, timeout);
        ncclComm out = slot.get(ncclComm.class, 0);
        slot.close();
        if (out == null || out.isNull()) {
            throw new IrisException("rank " + worldRank + ": " + call + " completed without a communicator");
        }
        awaitReady(out, call, worldRank, timeout);
        return checked(new NcclCommunicator(out, newName, worldRank, size, index, timeout), call);
    }

    /** ncclAllReduce of {@code count} elements on {@code stream}. */
    public void allReduce(long in, long out, long count, DType type, ReduceOp op, Stream stream) {
        call("ncclAllReduce(" + name + ")", () -> nccl.ncclAllReduce(ptr(in), ptr(out), count, NcclTypes.type(type),
                NcclTypes.op(op), comm, cuda(stream)));
    }

    /** ncclAllGather of {@code sendCount} elements per rank on {@code stream}. */
    public void allGather(long in, long out, long sendCount, DType type, Stream stream) {
        call("ncclAllGather(" + name + ")", () -> nccl.ncclAllGather(ptr(in), ptr(out), sendCount, NcclTypes.type(type),
                comm, cuda(stream)));
    }

    /** ncclReduceScatter into {@code recvCount} elements per rank on {@code stream}. */
    public void reduceScatter(long in, long out, long recvCount, DType type, ReduceOp op, Stream stream) {
        call("ncclReduceScatter(" + name + ")", () -> nccl.ncclReduceScatter(ptr(in), ptr(out), recvCount,
                NcclTypes.type(type), NcclTypes.op(op), comm, cuda(stream)));
    }

    /** ncclBroadcast of {@code count} elements from index {@code root} on {@code stream}; in place where in == out. */
    public void broadcast(long in, long out, long count, DType type, int root, Stream stream) {
        call("ncclBroadcast(" + name + ", root " + root + ")", () -> nccl.ncclBroadcast(ptr(in), ptr(out), count,
                NcclTypes.type(type), root, comm, cuda(stream)));
    }

    /**
     * One NCCL group of point-to-point transfers on {@code stream}: to every index p with
     * {@code sendCounts[p] > 0}, the elements at {@code in + sendOffsets[p]}; from every index q with
     * {@code recvCounts[q] > 0}, into {@code out + recvOffsets[q]} (counts and offsets in elements).
     * The peer's matching count must be equal: NCCL does not check it.
     */
    public void sendRecv(long in, long[] sendOffsets, long[] sendCounts, long out, long[] recvOffsets, long[] recvCounts,
                         DType type, Stream stream) {
        int t = NcclTypes.type(type);
        long bytes = type.byteSize();
        CUstream_st s = cuda(stream);
        call("ncclSend/ncclRecv group(" + name + ")", () -> {
            int status = nccl.ncclGroupStart();
            if (status != nccl.ncclSuccess) {
                return status;
            }
            for (int p = 0; p < size; p++) {
                if (sendCounts[p] > 0) {
                    status = firstFailure(status, nccl.ncclSend(ptr(in + sendOffsets[p] * bytes), sendCounts[p], t, p, comm, s));
                }
                if (recvCounts[p] > 0) {
                    status = firstFailure(status, nccl.ncclRecv(ptr(out + recvOffsets[p] * bytes), recvCounts[p], t, p, comm, s));
                }
            }
            return firstFailure(status, nccl.ncclGroupEnd());  // ends the group even after a failed call in it
        });
    }

    private static int firstFailure(int sofar, int next) {
        return sofar != nccl.ncclSuccess && sofar != nccl.ncclInProgress ? sofar : next;
    }

    public String name() {
        return name;
    }

    /** Number of ranks. */
    public int size() {
        return size;
    }

    /** This rank's index. */
    public int index() {
        return index;
    }

    /**
     * Finalizes (flushing what was enqueued, at most the timeout) and destroys the communicator;
     * aborts it when finalizing fails. Safe to call twice.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        String call = "ncclCommFinalize(" + name + ")";
        started(comm, nccl.ncclCommFinalize(comm), call, worldRank);
        awaitReady(comm, call, worldRank, timeout);  // aborts the communicator on failure or at the deadline
        NcclStatus.check(nccl.ncclCommDestroy(comm), "ncclCommDestroy(" + name + ")", worldRank, null);
    }

    @Override
    public String toString() {
        return "NcclCommunicator(" + name + ", index " + index + " of " + size + (closed.get() ? ", closed" : "") + ")";
    }

    /** A collective: NCCL may still be connecting (ncclInProgress); it is enqueued once that ends. */
    private void call(String call, IntSupplier nativeCall) {
        ensureOpen(call);
        int status = nativeCall.getAsInt();
        if (status == nccl.ncclInProgress) {
            awaitReady(comm, call, worldRank, timeout);
        } else {
            NcclStatus.check(status, call, worldRank, comm);
        }
    }

    /** Checks that NCCL numbers this rank as the caller expects. */
    private static NcclCommunicator checked(NcclCommunicator c, String call) {
        int[] count = new int[1];
        int[] rank = new int[1];
        NcclStatus.check(nccl.ncclCommCount(c.comm, count), "ncclCommCount(" + c.name + ")", c.worldRank, c.comm);
        NcclStatus.check(nccl.ncclCommUserRank(c.comm, rank), "ncclCommUserRank(" + c.name + ")", c.worldRank, c.comm);
        if (count[0] != c.size || rank[0] != c.index) {
            nccl.ncclCommAbort(c.comm);
            throw new IrisException("rank " + c.worldRank + ": " + call + " made a communicator of " + count[0]
                    + " ranks with this one at " + rank[0] + ", expected " + c.size + " ranks with this one at " + c.index);
        }
        return c;
    }

    /** The immediate answer of a non-blocking call: success or in progress; anything else aborts. */
    private static void started(ncclComm comm, int status, String call, int worldRank) {
        if (status != nccl.ncclSuccess && status != nccl.ncclInProgress) {
            String message = NcclStatus.message(status, call, worldRank, comm.isNull() ? null : comm);
            abort(comm);
            throw new IrisException(message);
        }
    }

    /** Polls until the communicator is done with what it was doing; aborts it on failure or at the deadline. */
    private static void awaitReady(ncclComm comm, String call, int worldRank, Duration timeout) {
        long start = System.nanoTime();
        int[] state = new int[1];
        while (true) {
            int status = nccl.ncclCommGetAsyncError(comm, state);
            if (status != nccl.ncclSuccess) {
                String message = NcclStatus.message(status, "ncclCommGetAsyncError after " + call, worldRank, comm);
                abort(comm);
                throw new IrisException(message);
            }
            if (state[0] == nccl.ncclSuccess) {
                return;
            }
            if (state[0] != nccl.ncclInProgress) {
                String message = NcclStatus.message(state[0], call, worldRank, comm);
                abort(comm);
                throw new IrisException(message);
            }
            long waited = System.nanoTime() - start;
            if (waited > timeout.toNanos()) {
                abort(comm);
                throw new IrisTimeoutException("rank " + worldRank + ": " + call + " did not complete within "
                        + timeout.toMillis() + " ms (IRIS_RENDEZVOUS_TIMEOUT_MS): a rank did not take part, or NCCL"
                        + " could not connect to it; the communicator was aborted");
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                abort(comm);
                throw new IrisException("rank " + worldRank + ": interrupted while waiting for " + call
                        + "; the communicator was aborted", e);
            }
        }
    }

    /** Best effort: the failure that led here is what the caller reports. */
    private static void abort(ncclComm comm) {
        if (!comm.isNull()) {
            nccl.ncclCommAbort(comm);
        }
    }

    private void ensureOpen(String call) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + worldRank + ": " + call + " on " + name + " after close()");
        }
    }

    private static DeviceAddressPointer ptr(long address) {
        return new DeviceAddressPointer(address);
    }

    private static CUstream_st cuda(Stream s) {
        return new CUstream_st(new DeviceAddressPointer(s.nativeHandle()));
    }
}

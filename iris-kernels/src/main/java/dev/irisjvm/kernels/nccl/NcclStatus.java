package dev.irisjvm.kernels.nccl;

import dev.irisjvm.core.IrisException;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;

/** NCCL's status codes as exceptions that name the call, the rank and NCCL's own explanation. */
final class NcclStatus {
    private NcclStatus() {}

    /**
     * Throws unless {@code status} is success (or, where {@code inProgressOk}, still in progress:
     * a non-blocking communicator's normal answer).
     *
     * @param comm the communicator the call used, for NCCL's last error message; may be null
     */
    static void check(int status, String call, int rank, ncclComm comm) {
        if (status != nccl.ncclSuccess && status != nccl.ncclInProgress) {
            throw new IrisException(message(status, call, rank, comm));
        }
    }

    static String message(int status, String call, int rank, ncclComm comm) {
        return "rank " + rank + ": " + call + " failed: " + errorString(status) + lastError(comm);
    }

    static String errorString(int status) {
        try {
            BytePointer text = nccl.ncclGetErrorString(status);
            return (text == null ? "unknown error" : text.getString()) + " (ncclResult_t " + status + ")";
        } catch (RuntimeException | LinkageError e) {
            return "ncclResult_t " + status;
        }
    }

    private static String lastError(ncclComm comm) {
        try {
            BytePointer text = nccl.ncclGetLastError(comm);
            String s = text == null ? "" : text.getString().strip();
            return s.isEmpty() ? "" : "; NCCL says: " + s;
        } catch (RuntimeException | LinkageError e) {
            return "";
        }
    }
}

package dev.irisjvm.kernels.baselines;

import java.util.function.IntFunction;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.javacpp.BytePointer;

/**
 * cuBLAS and cuBLASLt status codes (one enum, {@code cublasStatus_t}) turned into exceptions that
 * name the call, the library's text for the status and its number.
 *
 * <pre>{@code
 * CublasStatus.check(cublas.cublasCreate_v2(handle), "cublasCreate");
 * CublasStatus.checkLt(cublas.cublasLtMatmul(...), "cublasLtMatmul (4096 x 4096 x 4096 nk BF16 -> BF16)");
 * }</pre>
 */
final class CublasStatus {
    private CublasStatus() {}

    /** Throws IllegalStateException unless {@code status} is success, with cuBLAS's text for it. */
    static void check(int status, String call) {
        check(status, call, cublas::cublasGetStatusString);
    }

    /** The same with cuBLASLt's text, for the {@code cublasLt*} calls. */
    static void checkLt(int status, String call) {
        check(status, call, cublas::cublasLtGetStatusString);
    }

    private static void check(int status, String call, IntFunction<BytePointer> text) {
        if (status != cublas.CUBLAS_STATUS_SUCCESS) {
            String said;
            try {
                said = text.apply(status).getString();
            } catch (RuntimeException | LinkageError e) {
                said = "status " + status;
            }
            throw new IllegalStateException(call + " failed: " + said + " (" + status + ")");
        }
    }
}

package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisNativeException;
import dev.irisjvm.runtime.global.IrisRuntime;

/**
 * Turns {@code iris_status} codes into exceptions that name the rank, the function and the GPU
 * runtime's own error. One process drives one GPU, so the rank is process-wide.
 */
public final class NativeCalls {
    private static volatile int rank = -1;

    private NativeCalls() {}

    /** Set once the process knows its rank, so that every later failure names it. */
    public static void setRank(int processRank) {
        rank = processRank;
    }

    public static String rankLabel() {
        int r = rank;
        return r < 0 ? "rank ?" : "rank " + r;
    }

    /** Throws if {@code status} is not {@code IRIS_SUCCESS}. */
    public static void check(int status, String function) {
        if (status != IrisRuntime.IRIS_SUCCESS) {
            throw failure(status, function);
        }
    }

    static IrisNativeException failure(int status, String function) {
        String detail = IrisRuntime.iris_last_error().getString();
        int gpuError = IrisRuntime.iris_last_gpu_error();
        String message = rankLabel() + ": " + function + ": " + (detail.isEmpty() ? statusName(status) : detail);
        return new IrisNativeException(message, function, status, gpuError);
    }

    static String statusName(int status) {
        return switch (status) {
            case IrisRuntime.IRIS_ERROR_GPU -> "GPU runtime error";
            case IrisRuntime.IRIS_ERROR_INVALID_ARGUMENT -> "invalid argument";
            case IrisRuntime.IRIS_ERROR_NOT_FOUND -> "not found";
            case IrisRuntime.IRIS_ERROR_NOT_READY -> "not ready";
            case IrisRuntime.IRIS_ERROR_UNSUPPORTED -> "not available on this platform";
            default -> "status " + status;
        };
    }
}

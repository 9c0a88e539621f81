package dev.irisjvm.core;

/**
 * A call into the native runtime failed. The message names the rank, the C API function and the
 * GPU runtime call with its error, e.g.
 * {@code rank 1: iris_malloc: cudaMalloc(&p, bytes) failed: out of memory (cudaErrorMemoryAllocation)}.
 */
public class IrisNativeException extends IrisException {
    private final String function;
    private final int status;
    private final int gpuError;

    public IrisNativeException(String message, String function, int status, int gpuError) {
        super(message);
        this.function = function;
        this.status = status;
        this.gpuError = gpuError;
    }

    /** The C API function that failed, e.g. {@code iris_malloc}. */
    public String function() { return function; }

    /** The {@code iris_status} it returned. */
    public int status() { return status; }

    /** The CUDA/HIP error code behind it, or 0 when the failure was not a runtime error. */
    public int gpuError() { return gpuError; }
}

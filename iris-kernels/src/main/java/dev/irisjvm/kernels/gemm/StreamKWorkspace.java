package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;

/**
 * Stream-K's device memory for one {@link Gemm}: partials for every CTA a plan can launch, and the
 * shared tiles' counters; the skinny kernels' slices of K use the same memory ({@link SkinnyGemm}). The kernels leave every counter at zero, so they are zeroed once, in the
 * stream order of the first call that shares tiles (a memset, which a CUDA graph may capture);
 * nothing is allocated after {@link #allocate}.
 *
 * <p>Calls that share tiles use this one workspace: two of them must not run at the same time, so
 * calls of one {@link Gemm} on different streams need an order between those streams (or one Gemm
 * per stream), as with a cuBLAS handle's workspace.
 */
final class StreamKWorkspace implements AutoCloseable {
    private final DeviceMemory partials;
    private final DeviceMemory counters;
    private boolean zeroed;

    private StreamKWorkspace(DeviceMemory partials, DeviceMemory counters) {
        this.partials = partials;
        this.counters = counters;
    }

    /** The workspace for any plan on {@code multiprocessors} SMs. */
    static StreamKWorkspace allocate(int multiprocessors) {
        DeviceMemory partials = DeviceMemory.allocate(StreamKPlan.partialBytes(multiprocessors));
        try {
            return new StreamKWorkspace(partials, DeviceMemory.allocate(StreamKPlan.counterBytes(StreamKPlan.maxSharedTiles(multiprocessors))));
        } catch (RuntimeException | Error e) {
            partials.close();
            throw e;
        }
    }

    /** Zeroes the counters on {@code stream} before the first launch that counts on them. */
    void prepare(Stream stream) {
        if (!zeroed) {
            Memcpy.memset(counters.address(), 0, counters.bytes(), stream);
            zeroed = true;
        }
    }

    /** Floats of partials: what a split may use at the most. */
    long partialFloats() {
        return partials.bytes() / Float.BYTES;
    }

    /** u32 counters: the most tiles a split may share at once. */
    long counters() {
        return counters.bytes() / Integer.BYTES;
    }

    long partialsAddress() {
        return partials.address();
    }

    long countersAddress() {
        return counters.address();
    }

    @Override
    public void close() {
        try {
            partials.close();
        } finally {
            counters.close();
        }
    }
}

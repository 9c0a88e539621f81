package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.LongPointer;

/**
 * A plain device allocation of the current GPU (not on the symmetric heap), freed on close; or,
 * through {@link #wrap}, memory another library allocated and frees.
 */
public final class DeviceMemory extends NativeResource {
    private final long address;
    private final long bytes;
    private final boolean owned;

    private DeviceMemory(long address, long bytes, boolean owned) {
        this.address = address;
        this.bytes = bytes;
        this.owned = owned;
    }

    public static DeviceMemory allocate(long bytes) {
        NativeLibrary.ensureAvailable();
        if (bytes <= 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": bytes must be positive, got " + bytes);
        }
        try (LongPointer p = new LongPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_malloc(p, bytes), "iris_malloc(" + bytes + ")");
            return new DeviceMemory(p.get(), bytes, true);
        }
    }

    /**
     * {@code bytes} of device memory at {@code address} that another library owns (a PyTorch or
     * cuBLAS buffer, memory from {@code cudaMalloc} through JavaCPP): usable where this library
     * takes local device memory; {@link #close()} does not free it.
     */
    public static DeviceMemory wrap(long address, long bytes) {
        if (address == 0 || bytes <= 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": DeviceMemory.wrap: expected a device address"
                    + " other than 0 and a positive size, got 0x" + Long.toHexString(address) + " and " + bytes + " bytes");
        }
        return new DeviceMemory(address, bytes, false);
    }

    /** True when {@link #close()} frees the memory (made by {@link #allocate}, not {@link #wrap}). */
    public boolean isOwned() {
        return owned;
    }

    public long address() {
        ensureOpen();
        return address;
    }

    public long bytes() {
        return bytes;
    }

    @Override
    protected String describe() {
        return (owned ? "device allocation 0x" : "device memory 0x") + Long.toHexString(address) + " (" + bytes + " bytes"
                + (owned ? ")" : ", not owned)");
    }

    @Override
    protected void release() {
        if (owned) {
            NativeCalls.check(IrisRuntime.iris_free(address), "iris_free");
        }
    }
}

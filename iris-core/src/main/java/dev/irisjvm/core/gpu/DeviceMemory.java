package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.LongPointer;

/** A plain device allocation of the current GPU (not on the symmetric heap), freed on close. */
public final class DeviceMemory extends NativeResource {
    private final long address;
    private final long bytes;

    private DeviceMemory(long address, long bytes) {
        this.address = address;
        this.bytes = bytes;
    }

    public static DeviceMemory allocate(long bytes) {
        NativeLibrary.ensureAvailable();
        if (bytes <= 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": bytes must be positive, got " + bytes);
        }
        try (LongPointer p = new LongPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_malloc(p, bytes), "iris_malloc(" + bytes + ")");
            return new DeviceMemory(p.get(), bytes);
        }
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
        return "device allocation 0x" + Long.toHexString(address) + " (" + bytes + " bytes)";
    }

    @Override
    protected void release() {
        NativeCalls.check(IrisRuntime.iris_free(address), "iris_free");
    }
}

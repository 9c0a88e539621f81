package dev.irisjvm.core.internal;

import dev.irisjvm.core.gpu.NativeResource;
import dev.irisjvm.runtime.global.IrisRuntime;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.javacpp.Pointer;

/**
 * Page-locked host memory mapped into the GPU's address space: kernels write it, the host reads
 * it through {@link #buffer()} after a synchronize, without a copy. Used for small status words.
 */
public final class MappedHostMemory extends NativeResource {
    private final Pointer pointer;
    private final ByteBuffer buffer;

    private MappedHostMemory(Pointer pointer, int bytes) {
        this.pointer = pointer;
        this.buffer = pointer.capacity(bytes).asByteBuffer().order(ByteOrder.nativeOrder());
    }

    public static MappedHostMemory allocate(int bytes) {
        NativeLibrary.ensureAvailable();
        Pointer p = new Pointer();
        NativeCalls.check(IrisRuntime.iris_host_alloc_mapped(p, bytes), "iris_host_alloc_mapped(" + bytes + ")");
        MappedHostMemory m = new MappedHostMemory(p, bytes);
        m.buffer.put(0, new byte[bytes]);
        return m;
    }

    /** The address, valid on the host and (unified addressing) on the device. */
    public long address() {
        ensureOpen();
        return pointer.address();
    }

    /** Host view of the memory, native byte order. */
    public ByteBuffer buffer() {
        ensureOpen();
        return buffer;
    }

    @Override
    protected String describe() {
        return "mapped host memory 0x" + Long.toHexString(pointer.address());
    }

    @Override
    protected void release() {
        NativeCalls.check(IrisRuntime.iris_host_free(pointer), "iris_host_free");
    }
}

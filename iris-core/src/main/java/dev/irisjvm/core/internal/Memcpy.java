package dev.irisjvm.core.internal;

import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.Pointer;

/** Stream-ordered copies and memset on device addresses. */
public final class Memcpy {
    private Memcpy() {}

    public static void hostToDevice(long dst, Pointer src, long bytes, Stream stream) {
        NativeCalls.check(IrisRuntime.iris_memcpy_htod(dst, src, bytes, StreamHandles.of(stream)), "iris_memcpy_htod");
    }

    public static void deviceToHost(Pointer dst, long src, long bytes, Stream stream) {
        NativeCalls.check(IrisRuntime.iris_memcpy_dtoh(dst, src, bytes, StreamHandles.of(stream)), "iris_memcpy_dtoh");
    }

    public static void deviceToDevice(long dst, long src, long bytes, Stream stream) {
        NativeCalls.check(IrisRuntime.iris_memcpy_dtod(dst, src, bytes, StreamHandles.of(stream)), "iris_memcpy_dtod");
    }

    /**
     * Copy-engine copy between two GPUs of this process's view (cudaMemcpyPeerAsync). It cannot be
     * captured in a CUDA graph; for a peer's heap address mapped here ({@code DeviceContext.translate})
     * {@link #deviceToDevice} does the same copy and can be.
     */
    public static void peer(long dst, int dstDevice, long src, int srcDevice, long bytes, Stream stream) {
        NativeCalls.check(IrisRuntime.iris_memcpy_peer(dst, dstDevice, src, srcDevice, bytes, StreamHandles.of(stream)),
                "iris_memcpy_peer");
    }

    public static void memset(long dst, int value, long bytes, Stream stream) {
        NativeCalls.check(IrisRuntime.iris_memset_d8(dst, (byte) value, bytes, StreamHandles.of(stream)), "iris_memset_d8");
    }
}

package dev.irisjvm.core.internal;

import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.LongPointer;

/**
 * The IPC exchange: export a device allocation as 64 opaque bytes, and map another process's
 * exported allocation into this one. The symmetric heap is built from these.
 */
public final class IpcHandles {
    public static final int HANDLE_BYTES = IrisRuntime.IRIS_IPC_HANDLE_BYTES;

    private IpcHandles() {}

    public static byte[] export(long deviceAddress) {
        try (BytePointer handle = new BytePointer(HANDLE_BYTES)) {
            NativeCalls.check(IrisRuntime.iris_ipc_export(deviceAddress, handle), "iris_ipc_export");
            byte[] out = new byte[HANDLE_BYTES];
            handle.get(out);
            return out;
        }
    }

    /** Maps a peer's allocation; returns its address in this process. Close with {@link #close}. */
    public static long open(byte[] handle, int peerRank) {
        if (handle.length != HANDLE_BYTES) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": IPC handle from rank " + peerRank
                    + " has " + handle.length + " bytes, expected " + HANDLE_BYTES);
        }
        try (BytePointer h = new BytePointer(handle); LongPointer address = new LongPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_ipc_open(h, address), "iris_ipc_open(heap of rank " + peerRank + ")");
            return address.get();
        }
    }

    public static void close(long mappedAddress, int peerRank) {
        NativeCalls.check(IrisRuntime.iris_ipc_close(mappedAddress), "iris_ipc_close(heap of rank " + peerRank + ")");
    }
}

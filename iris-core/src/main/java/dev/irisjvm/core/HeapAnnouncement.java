package dev.irisjvm.core;

import dev.irisjvm.core.internal.IpcHandles;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What each rank tells the others at init so that they can map its heap: the heap's IPC handle and
 * size, and the GPU it lives on, by PCI address and host (device indexes differ between processes
 * that see different {@code CUDA_VISIBLE_DEVICES}).
 */
record HeapAnnouncement(byte[] ipcHandle, long heapSize, String pciAddress, String host) {
    private static final int TEXT_BYTES = 64;
    static final int BYTES = IpcHandles.HANDLE_BYTES + 8 + 2 * TEXT_BYTES;

    byte[] encode() {
        ByteBuffer out = ByteBuffer.allocate(BYTES).put(ipcHandle).putLong(heapSize);
        putText(out, pciAddress);
        putText(out, host);
        return out.array();
    }

    static HeapAnnouncement decode(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        byte[] handle = new byte[IpcHandles.HANDLE_BYTES];
        in.get(handle);
        long size = in.getLong();
        return new HeapAnnouncement(handle, size, getText(in), getText(in));
    }

    /** Same host and PCI address: the same GPU. */
    boolean sameGpuAs(HeapAnnouncement other) {
        return host.equals(other.host) && pciAddress.equals(other.pciAddress);
    }

    private static void putText(ByteBuffer out, String text) {
        byte[] field = new byte[TEXT_BYTES];
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, field, 0, Math.min(b.length, TEXT_BYTES));
        out.put(field);
    }

    private static String getText(ByteBuffer in) {
        byte[] field = new byte[TEXT_BYTES];
        in.get(field);
        int end = 0;
        while (end < TEXT_BYTES && field[end] != 0) {
            end++;
        }
        return new String(field, 0, end, StandardCharsets.UTF_8);
    }
}

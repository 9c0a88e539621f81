package dev.irisjvm.kernels;

import org.bytedeco.javacpp.Pointer;

/**
 * A JavaCPP pointer at a device address, for the baselines' native APIs (NCCL, cuBLAS) that take
 * {@code void*} buffers. It owns nothing and frees nothing.
 *
 * <pre>{@code
 * ncclSend(new DevicePointer(tensor.deviceAddress()), bytes, ncclUint8, peer, comm, stream);
 * }</pre>
 */
public final class DevicePointer extends Pointer {
    public DevicePointer(long address) {
        this.address = address;
    }
}

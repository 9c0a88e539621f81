package dev.irisjvm.kernels.baselines;

import org.bytedeco.javacpp.Pointer;

/**
 * A JavaCPP pointer at a device address, for the baselines' native APIs (NCCL, cuBLAS) that take
 * {@code void*} buffers. It owns nothing and frees nothing.
 *
 * <pre>{@code
 * ncclSend(new DevicePointer(tensor.deviceAddress()), bytes, ncclUint8, peer, comm, stream);
 * }</pre>
 */
final class DevicePointer extends Pointer {
    DevicePointer(long address) {
        this.address = address;
    }
}

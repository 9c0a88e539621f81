package dev.irisjvm.kernels.nccl;

import org.bytedeco.javacpp.Pointer;

/** A JavaCPP pointer at a device address or a native handle, for NCCL's arguments; owns and frees nothing. */
final class DeviceAddressPointer extends Pointer {
    DeviceAddressPointer(long address) {
        this.address = address;
    }
}

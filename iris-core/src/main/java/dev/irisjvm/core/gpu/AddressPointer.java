package dev.irisjvm.core.gpu;

import org.bytedeco.javacpp.Pointer;

/** A pointer at a given address: how JavaCPP's handle types are made from a raw value another library gave. */
final class AddressPointer extends Pointer {
    AddressPointer(long address) {
        this.address = address;
    }
}

package dev.irisjvm.core.internal;

import org.bytedeco.javacpp.Pointer;

/**
 * A device address where a generated argument struct's setter takes a {@link Pointer}. Reusable:
 * {@link #at} moves it, so filling a struct for a launch allocates nothing. It owns no memory.
 *
 * <pre>{@code
 * DeviceAddress in = new DeviceAddress();
 * args.in(in.at(tensor.deviceAddress()));
 * }</pre>
 */
public final class DeviceAddress extends Pointer {
    /** Points at {@code deviceAddress}; returns this. */
    public DeviceAddress at(long deviceAddress) {
        address = deviceAddress;
        return this;
    }
}

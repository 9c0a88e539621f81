package dev.irisjvm.core;

/**
 * A kernel recorded a failure on the device, e.g. a bounded wait that passed its deadline because
 * a peer never arrived. The facts come from the rank's device status record.
 */
public class IrisDeviceException extends IrisException {
    private final int code;
    private final int peer;

    public IrisDeviceException(String message, int code, int peer) {
        super(message);
        this.code = code;
        this.peer = peer;
    }

    /** The device error code (1: wait timeout, 2: barrier timeout). */
    public int code() {
        return code;
    }

    /** The rank that was waited for, or -1. */
    public int peer() {
        return peer;
    }
}

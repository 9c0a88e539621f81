package dev.irisjvm.core;

/** A bounded wait ran past its deadline: a rendezvous step, a device-side wait or a barrier. */
public class IrisTimeoutException extends IrisException {
    public IrisTimeoutException(String message) {
        super(message);
    }
}

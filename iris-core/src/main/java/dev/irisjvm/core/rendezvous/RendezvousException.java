package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisException;

/**
 * The rendezvous failed for a reason other than running out of time: a rank was rejected at
 * join (no proof of the job's secret, world size, duplicate or out-of-range rank), a connection dropped,
 * ranks called different collectives, or a frame was malformed or over the size limit.
 * Timeouts are reported as {@link dev.irisjvm.core.IrisTimeoutException} instead, so that
 * callers can tell "someone is missing" apart from "something is wrong".
 */
public class RendezvousException extends IrisException {
    public RendezvousException(String message) {
        super(message);
    }

    public RendezvousException(String message, Throwable cause) {
        super(message, cause);
    }
}

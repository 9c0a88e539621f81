package dev.irisjvm.core.rendezvous;

import java.time.Duration;

/**
 * What connections that have not yet authenticated may cost rank 0, so that strangers flooding
 * the port cannot keep the real ranks out.
 *
 * @param maxPending       connections accepted but not yet authenticated; one more makes rank 0
 *                         drop the oldest (a real rank that loses its connection this way retries)
 * @param handshakeTimeout how long a connection may take from being accepted to proving that it
 *                         holds the job's secret; a real rank needs a few round trips
 */
record JoinLimits(int maxPending, Duration handshakeTimeout) {
    /** Generous for a real rank on a loaded host, short enough that silent strangers make room. */
    static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);
    /** Floor of {@link #maxPending}: small worlds still ride out a burst of strangers. */
    static final int MIN_PENDING = 64;
    /** Ceiling of {@link #maxPending}: more would only compete for the process's file descriptors. */
    static final int MAX_PENDING = 1024;

    JoinLimits {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending must be >= 1, got " + maxPending);
        }
        if (handshakeTimeout == null || handshakeTimeout.isZero() || handshakeTimeout.isNegative()) {
            throw new IllegalArgumentException("handshakeTimeout must be a positive duration, got " + handshakeTimeout);
        }
    }

    /** Four pending connections per rank, within [64, 1024]; the handshake within the rendezvous timeout. */
    static JoinLimits forConfig(RendezvousConfig config) {
        int pending = (int) Math.max(MIN_PENDING, Math.min(MAX_PENDING, 4L * config.worldSize()));
        Duration handshake = config.timeout().compareTo(HANDSHAKE_TIMEOUT) < 0 ? config.timeout() : HANDSHAKE_TIMEOUT;
        return new JoinLimits(pending, handshake);
    }
}

package dev.irisjvm.core.rendezvous;

/** How one rank takes part in a collective step: as rank 0's hub or as a member. */
interface Transport extends AutoCloseable {

    /**
     * Contributes {@code payload} to a step and returns what the step yields: every rank's
     * payload (allGather), the root's payload alone (broadcast) or nothing (barrier).
     */
    byte[][] exchange(long step, Collective op, int root, byte[] payload);

    /** Idempotent; releases sockets and selectors. */
    @Override
    void close();
}

package dev.irisjvm.core.rendezvous;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job's shared secret, as the key of the join handshake's HMACs. It never leaves the
 * process: not on the wire (see {@link Handshake}), not in messages, not in {@link #toString()}.
 *
 * <p>Without a secret the handshake still runs, under a key everybody knows, so that there is
 * one protocol; it then proves nothing, which is why such a rendezvous may only use loopback
 * addresses ({@link #requireSecretOrLoopback}).
 */
final class JobSecret {
    private static final Logger LOG = LoggerFactory.getLogger(JobSecret.class);

    /** Public by construction: with it the handshake only keeps out strangers to the protocol. */
    private static final byte[] NO_SECRET_KEY = "iris-rendezvous: no job secret".getBytes(StandardCharsets.UTF_8);
    /** One line per process is enough to say the job runs unauthenticated; per rendezvous is noise. */
    private static final AtomicBoolean NO_SECRET_LOGGED = new AtomicBoolean();

    private final byte[] key;
    private final boolean set;

    private JobSecret(byte[] key, boolean set) {
        this.key = key;
        this.set = set;
    }

    /** From the job token; {@code ""} means none. */
    static JobSecret of(String jobToken) {
        if (jobToken.isEmpty()) {
            return new JobSecret(NO_SECRET_KEY, false);
        }
        return new JobSecret(jobToken.getBytes(StandardCharsets.UTF_8), true);
    }

    boolean isSet() {
        return set;
    }

    /** The HMAC key; callers must not keep or change it. */
    byte[] key() {
        return key;
    }

    /**
     * Refuses to use a non-loopback address without a secret: anyone who can reach the port
     * could otherwise join and receive rank 0's payload, CUDA IPC handles included. The wildcard
     * address 0.0.0.0 counts as non-loopback, since it listens on every interface.
     *
     * @throws RendezvousException naming IRIS_JOB_TOKEN and IRIS_JOB_TOKEN_FILE and what to do
     */
    static void requireSecretOrLoopback(JobSecret secret, int rank, InetSocketAddress address, String where) {
        if (secret.isSet()) {
            return;
        }
        if (!address.getAddress().isLoopbackAddress()) {
            throw new RendezvousException(String.format(
                    "rank %d: the rendezvous at %s is not on a loopback address and no job secret is set;"
                            + " any process that can reach it could join the job and receive its CUDA IPC handles."
                            + " Set the same secret on every rank with IRIS_JOB_TOKEN=<secret> or"
                            + " IRIS_JOB_TOKEN_FILE=<file readable only by you> (e.g. head -c 32 /dev/urandom | base64;"
                            + " bin/iris-run sets one per launch), or use 127.0.0.1 for a job on one host",
                    rank, where));
        }
        if (NO_SECRET_LOGGED.compareAndSet(false, true)) {
            LOG.info("rank {}: no job secret is set (IRIS_JOB_TOKEN / IRIS_JOB_TOKEN_FILE), so the rendezvous at {}"
                    + " is limited to loopback and admits any process on this host that finds its port", rank, where);
        }
    }

    @Override
    public String toString() {
        return set ? "JobSecret[<set>]" : "JobSecret[<none>]";
    }
}

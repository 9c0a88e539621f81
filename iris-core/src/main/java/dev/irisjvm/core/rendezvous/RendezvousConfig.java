package dev.irisjvm.core.rendezvous;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Where and how the ranks of one job meet.
 *
 * <pre>{@code
 * String secret = RankEnvironment.current().jobToken();   // IRIS_JOB_TOKEN or IRIS_JOB_TOKEN_FILE
 * var cfg = new RendezvousConfig(rank, worldSize, "10.0.0.1", 29500, secret,
 *         Duration.ofSeconds(60), RendezvousConfig.DEFAULT_MAX_FRAME_BYTES);
 * }</pre>
 *
 * @param rank          this process's rank, in {@code [0, worldSize)}; rank 0 hosts the rendezvous
 * @param worldSize     number of ranks, at least 1
 * @param host          the address rank 0 listens on, and only on (use {@code 0.0.0.0} for all
 *                      interfaces); the other ranks connect to it
 * @param port          rank 0's port in {@code [1, 65535]}; rank 0 may use 0 for an ephemeral
 *                      port (see {@link Rendezvous#listen})
 * @param jobToken      the job's shared secret, equal on all ranks, so that strangers and ranks
 *                      of another job using the same host and port are turned away. It never
 *                      crosses the wire: every rank and rank 0 prove to each other that they
 *                      hold it (HMAC-SHA256 over fresh nonces), and refusals say nothing about
 *                      it. {@code ""} for none, which limits the rendezvous to loopback
 *                      addresses: without a secret anyone who reaches the port could join.
 * @param timeout       how long the join, and each later step, may wait for the other ranks
 * @param maxFrameBytes the largest frame a rank sends or accepts; bounds what a peer can make
 *                      it allocate. An allGather result carries all ranks' payloads plus 4
 *                      bytes each and 13 bytes of header.
 */
public record RendezvousConfig(int rank, int worldSize, String host, int port, String jobToken,
                               Duration timeout, int maxFrameBytes) {

    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    public static final int DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

    public RendezvousConfig {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + (worldSize - 1) + "] for worldSize "
                    + worldSize + ", got " + rank);
        }
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host must be a host name or IP address such as 127.0.0.1, got "
                    + (host == null ? "null" : "'" + host + "'"));
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        }
        if (port == 0 && rank != 0) {
            throw new IllegalArgumentException("port must be in [1, 65535] for rank " + rank
                    + ", got 0: only rank 0 may bind an ephemeral port, the others need the port it got");
        }
        if (jobToken == null) {
            throw new IllegalArgumentException("jobToken must not be null (use \"\" for no token)");
        }
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be a positive duration, got " + timeout);
        }
        if (maxFrameBytes <= 0) {
            throw new IllegalArgumentException("maxFrameBytes must be > 0, got " + maxFrameBytes);
        }
        if (maxFrameBytes < FrameCodec.JOIN_BODY_BYTES) {
            throw new IllegalArgumentException("maxFrameBytes must be >= " + FrameCodec.JOIN_BODY_BYTES
                    + " to carry the join handshake, got " + maxFrameBytes);
        }
    }

    /** With {@link #DEFAULT_TIMEOUT} and {@link #DEFAULT_MAX_FRAME_BYTES}. */
    public RendezvousConfig(int rank, int worldSize, String host, int port, String jobToken) {
        this(rank, worldSize, host, port, jobToken, DEFAULT_TIMEOUT, DEFAULT_MAX_FRAME_BYTES);
    }

    /** The same job seen from another rank; handy where one place builds every rank's config. */
    public RendezvousConfig withRank(int otherRank) {
        return new RendezvousConfig(otherRank, worldSize, host, port, jobToken, timeout, maxFrameBytes);
    }

    /** The same job with rank 0 at {@code otherPort}, e.g. the port an ephemeral bind got. */
    public RendezvousConfig withPort(int otherPort) {
        return new RendezvousConfig(rank, worldSize, host, otherPort, jobToken, timeout, maxFrameBytes);
    }

    /** The job token as the handshake's key. */
    JobSecret secret() {
        return JobSecret.of(jobToken);
    }

    /** Resolved now rather than at construction, so that a config can be built before DNS is up. */
    InetSocketAddress socketAddress() {
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            throw new RendezvousException("rank " + rank + " cannot resolve rendezvous host '" + host + "'");
        }
        return address;
    }

    /** Like the record's, but the job token is redacted: configs end up in logs. */
    @Override
    public String toString() {
        return "RendezvousConfig[rank=" + rank + ", worldSize=" + worldSize + ", host=" + host + ", port=" + port
                + ", jobToken=" + (jobToken.isEmpty() ? "<none>" : "<set>") + ", timeout=" + timeout
                + ", maxFrameBytes=" + maxFrameBytes + "]";
    }

    /** {@code host:port}, with IPv6 literals bracketed, as messages show it. */
    static String address(String host, int port) {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}

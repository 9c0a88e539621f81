package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisTimeoutException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The side of a rank other than 0: one connection to rank 0, one request and reply per step. */
final class MemberLink implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(MemberLink.class);

    /**
     * How much longer than its own timeout a member waits for rank 0's verdict. Rank 0 is
     * the one that knows which ranks are missing; when both give up at about the same time,
     * this lets the member report rank 0's reason instead of a vaguer one of its own.
     */
    static final Duration VERDICT_GRACE = Duration.ofSeconds(1);

    private static final long FIRST_RETRY_MILLIS = 20;
    private static final long MAX_RETRY_MILLIS = 500;

    private final RendezvousConfig config;
    private final String where;
    private final FrameChannel link;

    private MemberLink(RendezvousConfig config, String where, FrameChannel link) {
        this.config = config;
        this.where = where;
        this.link = link;
    }

    /**
     * Connects to rank 0 (retrying while it is not up yet), proves that it holds the job's
     * secret and checks that rank 0 does too ({@link Handshake}), and waits for the welcome.
     * A connection that rank 0 closes before answering (it drops the oldest unauthenticated
     * connections when strangers flood it) is tried again until the deadline.
     */
    static MemberLink join(RendezvousConfig config) {
        Deadline connectBy = Deadline.after(config.timeout());
        Deadline verdictBy = Deadline.after(config.timeout(), grace(config.timeout()));
        String where = RendezvousConfig.address(config.host(), config.port());
        JobSecret secret = config.secret();
        JobSecret.requireSecretOrLoopback(secret, config.rank(), config.socketAddress(), where);
        Handshake handshake = new Handshake(secret);
        long backoff = FIRST_RETRY_MILLIS;
        while (true) {
            FrameChannel link = new FrameChannel(connect(config, where, connectBy), config.maxFrameBytes(),
                    "rank 0 at " + where);
            String unanswered;
            try {
                unanswered = authenticate(config, where, link, handshake, connectBy, verdictBy);
            } catch (RuntimeException e) {
                link.close();
                throw e;
            }
            if (unanswered == null) {
                return awaitWelcome(config, where, link, verdictBy);
            }
            link.close();
            if (connectBy.expired()) {
                throw new RendezvousException(String.format(
                        "rank %d lost its connection to rank 0 at %s during the join (step 0): %s",
                        config.rank(), where, unanswered));
            }
            LOG.debug("rank {}: rank 0 at {} closed the connection before answering ({}); trying again",
                    config.rank(), where, unanswered);
            sleep(Math.min(backoff, connectBy.waitMillis()), config.rank());
            backoff = Math.min(MAX_RETRY_MILLIS, backoff * 2);
        }
    }

    /**
     * The handshake on one connection. Returns null once rank 0 accepted this rank, or why the
     * connection ended before rank 0 gave any verdict (worth another try); throws on a verdict.
     */
    private static String authenticate(RendezvousConfig config, String where, FrameChannel link,
                                       Handshake handshake, Deadline sendBy, Deadline replyBy) {
        Supplier<String> sendTimeout = () -> String.format(
                "rank %d timed out after %d ms sending its join to rank 0 at %s (step 0, join)",
                config.rank(), config.timeout().toMillis(), where);
        Supplier<String> replyTimeout = () -> String.format(
                "rank %d timed out after %d ms waiting for rank 0 at %s to confirm the join (step 0, join):"
                        + " not all %d ranks arrived, or rank 0 is not serving the rendezvous",
                config.rank(), config.timeout().toMillis(), where, config.worldSize());
        byte[] memberNonce = handshake.nonce();
        Frame reply;
        try {
            link.send(FrameCodec.encode(new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, config.rank(),
                    config.worldSize(), memberNonce), config.maxFrameBytes()), sendBy, sendTimeout);
            reply = link.receive(replyBy, replyTimeout);
        } catch (RendezvousException e) {
            return unanswered(link, where, e);
        }
        Frame.Challenge challenge = expect(Frame.Challenge.class, reply, config, where);
        if (challenge.nonce().length != Handshake.NONCE_BYTES) {
            throw protocolError(config, where, "a challenge of " + challenge.nonce().length + " bytes");
        }
        byte[] proof = handshake.memberProof(memberNonce, challenge.nonce(), config.rank(), config.worldSize());
        try {
            link.send(FrameCodec.encode(new Frame.Proof(proof), config.maxFrameBytes()), sendBy, sendTimeout);
            reply = link.receive(replyBy, replyTimeout);
        } catch (RendezvousException e) {
            return unanswered(link, where, e);
        }
        Frame.Accept accept = expect(Frame.Accept.class, reply, config, where);
        byte[] expected = handshake.rootProof(memberNonce, challenge.nonce(), config.rank(), config.worldSize());
        if (!Handshake.matches(expected, accept.proof())) {
            throw new RendezvousException(String.format(
                    "rank %d: the process at %s did not prove that it holds this job's secret: it is not this job's"
                            + " rank 0 (another job on the same port?), or the ranks' IRIS_JOB_TOKEN /"
                            + " IRIS_JOB_TOKEN_FILE differ", config.rank(), where));
        }
        return null;
    }

    private static MemberLink awaitWelcome(RendezvousConfig config, String where, FrameChannel link, Deadline verdictBy) {
        Frame verdict;
        try {
            verdict = link.receive(verdictBy, () -> String.format(
                    "rank %d timed out after %d ms waiting for rank 0 at %s to confirm the join (step 0, join):"
                            + " not all %d ranks arrived, or rank 0 is not serving the rendezvous",
                    config.rank(), config.timeout().toMillis(), where, config.worldSize()));
        } catch (RendezvousException e) {
            link.close();
            throw new RendezvousException(String.format(
                    "rank %d lost its connection to rank 0 at %s during the join (step 0): %s",
                    config.rank(), where, e.getMessage()), e);
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
        if (verdict instanceof Frame.Welcome) {
            LOG.debug("rank {} joined the rendezvous at {} (world size {})", config.rank(), where, config.worldSize());
            return new MemberLink(config, where, link);
        }
        link.close();
        if (verdict instanceof Frame.Failure failure) {
            throw fromRoot(where, failure);
        }
        throw protocolError(config, where, "a " + verdict.describe());
    }

    /** The frame as {@code type}; rank 0's failure notice as its exception; anything else as a protocol error. */
    private static <F extends Frame> F expect(Class<F> type, Frame frame, RendezvousConfig config, String where) {
        if (type.isInstance(frame)) {
            return type.cast(frame);
        }
        if (frame instanceof Frame.Failure failure) {
            throw fromRoot(where, failure);
        }
        throw protocolError(config, where, "a " + frame.describe());
    }

    /**
     * Why the connection ended before a verdict, for another try; but rank 0's reason when it
     * sent one that our failed write or read overtook.
     */
    private static String unanswered(FrameChannel link, String where, RendezvousException e) {
        Frame.Failure notice = pendingNotice(link);
        if (notice != null) {
            throw fromRoot(where, notice);
        }
        return e.getMessage();
    }

    private static RendezvousException protocolError(RendezvousConfig config, String where, String what) {
        return new RendezvousException(String.format(
                "protocol error: rank 0 at %s answered the join of rank %d with %s", where, config.rank(), what));
    }

    @Override
    public byte[][] exchange(long step, Collective op, int root, byte[] payload) {
        String at = op.describe(step, root);
        Deadline deadline = Deadline.after(config.timeout());
        Deadline replyBy = Deadline.after(config.timeout(), grace(config.timeout()));
        ByteBuffer request;
        try {
            request = FrameCodec.encode(new Frame.Request(step, op, root, payload), config.maxFrameBytes());
        } catch (RendezvousException e) {
            throw new RendezvousException("rank " + config.rank() + " cannot take part in " + at + ": "
                    + e.getMessage(), e);
        }
        Frame reply;
        try {
            link.send(request, deadline, () -> String.format(
                    "rank %d timed out after %d ms sending its request for %s to rank 0 at %s",
                    config.rank(), config.timeout().toMillis(), at, where));
            reply = link.receive(replyBy, () -> String.format(
                    "rank %d timed out after %d ms waiting for rank 0 at %s to complete %s",
                    config.rank(), config.timeout().toMillis(), where, at));
        } catch (RendezvousException e) {
            Frame.Failure notice = pendingNotice(link);
            if (notice != null) {
                throw fromRoot(where, notice);
            }
            throw new RendezvousException(String.format("rank %d lost its connection to rank 0 at %s during %s: %s",
                    config.rank(), where, at, e.getMessage()), e);
        }
        if (reply instanceof Frame.Failure failure) {
            throw fromRoot(where, failure);
        }
        if (!(reply instanceof Frame.Result result) || result.step() != step || result.op() != op) {
            throw new RendezvousException(String.format(
                    "protocol error: rank 0 at %s answered %s of rank %d with a %s",
                    where, at, config.rank(), reply.describe()));
        }
        int expected = switch (op) {
            case BARRIER -> 0;
            case BROADCAST -> 1;
            case ALL_GATHER -> config.worldSize();
        };
        if (result.payloads().length != expected) {
            throw new RendezvousException(String.format(
                    "protocol error: rank 0 at %s answered %s with %d payloads, expected %d",
                    where, at, result.payloads().length, expected));
        }
        return result.payloads();
    }

    @Override
    public void close() {
        link.close();
    }

    /**
     * Rank 0 sends its reason before closing, but our write into the closed connection can
     * fail first; the reason may still be waiting in the socket, and it beats "broken pipe".
     */
    private static Frame.Failure pendingNotice(FrameChannel link) {
        try {
            return link.poll() instanceof Frame.Failure failure ? failure : null;
        } catch (RendezvousException unreadable) {
            return null;
        }
    }

    private static SocketChannel connect(RendezvousConfig config, String where, Deadline deadline) {
        InetSocketAddress address = config.socketAddress();
        long backoff = FIRST_RETRY_MILLIS;
        IOException last = null;
        while (true) {
            if (deadline.expired()) {
                throw new IrisTimeoutException(String.format(
                        "rank %d could not reach rank 0 at %s within %d ms (step 0, join): %s",
                        config.rank(), where, config.timeout().toMillis(),
                        last == null ? "no attempt completed" : FrameReader.reason(last)));
            }
            SocketChannel channel = null;
            try {
                channel = SocketChannel.open();
                // Blocking only for the connect, which is then bounded by the remaining time.
                channel.socket().connect(address, (int) Math.min(Integer.MAX_VALUE, deadline.waitMillis()));
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return channel;
            } catch (IOException e) {
                // Usually "connection refused": rank 0 has not started listening yet.
                FrameChannel.closeQuietly(channel);
                last = e;
                LOG.trace("rank {} cannot reach {} yet: {}", config.rank(), where, FrameReader.reason(e));
            }
            sleep(Math.min(backoff, deadline.waitMillis()), config.rank());
            backoff = Math.min(MAX_RETRY_MILLIS, backoff * 2);
        }
    }

    private static void sleep(long millis, int rank) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RendezvousException("rank " + rank + " was interrupted while connecting to rank 0");
        }
    }

    private static IrisException fromRoot(String where, Frame.Failure failure) {
        String message = "rank 0 at " + where + " reported: " + failure.message();
        return failure.timeout() ? new IrisTimeoutException(message) : new RendezvousException(message);
    }

    private static Duration grace(Duration timeout) {
        return timeout.compareTo(VERDICT_GRACE) < 0 ? timeout : VERDICT_GRACE;
    }
}

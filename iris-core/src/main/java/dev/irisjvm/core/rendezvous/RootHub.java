package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisTimeoutException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rank 0's side: listens, admits the other ranks, and serves every collective step by
 * collecting one request from each member and answering all of them.
 *
 * <p>All of it runs on the calling thread with one selector over the listening socket and
 * the member connections, so there is no server thread to leak, a member that drops is seen
 * whichever rank it is, and every wait ends at the step's deadline.
 */
final class RootHub implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(RootHub.class);

    private final RendezvousConfig config;
    private final String where;
    private final int boundPort;
    private final Selector selector;
    private ServerSocketChannel server;                            // null once everyone joined
    private final FrameChannel[] members;                          // by rank; [0] stays null
    // Copy-on-write: close() may run on another thread to abort a wait.
    private final List<FrameChannel> strangers = new CopyOnWriteArrayList<>(); // connected, not yet joined
    private int joined;
    private volatile boolean closed;

    private RootHub(RendezvousConfig config, Selector selector, ServerSocketChannel server, int boundPort) {
        this.config = config;
        this.selector = selector;
        this.server = server;
        this.boundPort = boundPort;
        this.where = RendezvousConfig.address(config.host(), boundPort);
        this.members = new FrameChannel[config.worldSize()];
    }

    /** Binds to exactly the configured address; ranks may connect from now on. */
    static RootHub listen(RendezvousConfig config) {
        InetSocketAddress address = config.socketAddress();
        Selector selector = null;
        ServerSocketChannel server = null;
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open();
            // A restarted job must be able to bind while the last run's connections sit in TIME_WAIT.
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(address, Math.max(64, config.worldSize()));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            LOG.debug("rank 0 listening at {} for a world of {}", RendezvousConfig.address(config.host(), port),
                    config.worldSize());
            return new RootHub(config, selector, server, port);
        } catch (IOException e) {
            FrameChannel.closeQuietly(server);
            FrameChannel.closeQuietly(selector);
            throw new RendezvousException("rank 0 cannot listen on "
                    + RendezvousConfig.address(config.host(), config.port()) + ": " + FrameReader.reason(e), e);
        }
    }

    int boundPort() {
        return boundPort;
    }

    /**
     * Admits ranks until all {@code worldSize - 1} have joined, then welcomes them. A bad join
     * is answered with the reason and dropped; the legitimate ranks may still come.
     */
    void awaitMembers() {
        Deadline deadline = Deadline.after(config.timeout());
        try {
            while (joined < members.length - 1) {
                checkInterrupted("waiting for ranks to join");
                if (deadline.expired()) {
                    throw fail(new IrisTimeoutException(String.format(
                            "rendezvous at %s timed out after %d ms: ranks %s never joined",
                            where, config.timeout().toMillis(), absentRanks(members))));
                }
                selector.select(deadline.waitMillis());
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isAcceptable()) {
                        acceptAll();
                    } else if (key.isValid() && key.isReadable()) {
                        onJoinTraffic((FrameChannel) key.attachment());
                    }
                }
            }
            admitted();
        } catch (IOException e) {
            throw fail(new RendezvousException("rendezvous at " + where + " failed while ranks were joining: "
                    + FrameReader.reason(e), e));
        }
    }

    @Override
    public byte[][] exchange(long step, Collective op, int root, byte[] payload) {
        String at = op.describe(step, root);
        Deadline deadline = Deadline.after(config.timeout());
        Frame.Request[] requests = new Frame.Request[members.length];
        requests[0] = new Frame.Request(step, op, root, payload);
        int arrived = 1;
        try {
            while (arrived < members.length) {
                checkInterrupted("waiting at " + at);
                if (deadline.expired()) {
                    throw fail(new IrisTimeoutException(String.format(
                            "rendezvous at %s timed out after %d ms at %s: ranks %s did not arrive",
                            where, config.timeout().toMillis(), at, absentRanks(requests))));
                }
                selector.select(deadline.waitMillis());
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isReadable()) {
                        FrameChannel member = (FrameChannel) key.attachment();
                        Frame.Request request = nextRequest(member, at, requests);
                        if (request != null) {
                            requests[rankOf(member)] = request;
                            arrived++;
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw fail(new RendezvousException("rank 0 failed at " + at + ": " + FrameReader.reason(e), e));
        }
        byte[][] result = combine(op, root, requests);
        answerAll(new Frame.Result(step, op, result), at);
        return result;
    }

    /** A member's request for this step, null if it has not fully arrived; fails on anything else. */
    private Frame.Request nextRequest(FrameChannel member, String at, Frame.Request[] requests) {
        int rank = rankOf(member);
        Frame frame;
        try {
            frame = member.poll();
        } catch (RendezvousException e) {
            throw fail(new RendezvousException(String.format(
                    "rank %d dropped out of the rendezvous at %s: %s", rank, at, e.getMessage()), e));
        }
        if (frame == null) {
            return null;
        }
        if (!(frame instanceof Frame.Request request)) {
            throw fail(new RendezvousException(String.format(
                    "protocol error: rank %d sent a %s at %s, expected a request", rank, frame.describe(), at)));
        }
        if (requests[rank] != null) {
            throw fail(new RendezvousException(String.format(
                    "protocol error: rank %d sent a second request at %s", rank, at)));
        }
        String theirs = request.op().describe(request.step(), request.root());
        if (!theirs.equals(at)) {
            throw fail(new RendezvousException(String.format(
                    "collective mismatch: rank %d is at %s, rank 0 at %s", rank, theirs, at)));
        }
        return request;
    }

    private static byte[][] combine(Collective op, int root, Frame.Request[] requests) {
        return switch (op) {
            case BARRIER -> new byte[0][];
            case BROADCAST -> new byte[][] {requests[root].payload()};
            case ALL_GATHER -> {
                byte[][] all = new byte[requests.length][];
                for (int r = 0; r < requests.length; r++) {
                    all[r] = requests[r].payload();
                }
                yield all;
            }
        };
    }

    /**
     * Sends one frame to every member. The send gets a fresh timeout: the step's own may be
     * nearly spent by a late rank, and a result of several MiB still has to go out.
     */
    private void answerAll(Frame frame, String at) {
        ByteBuffer encoded;
        try {
            encoded = FrameCodec.encode(frame, config.maxFrameBytes());
        } catch (RendezvousException e) {
            throw fail(new RendezvousException("rank 0 cannot answer " + at + ": " + e.getMessage(), e));
        }
        Deadline deadline = Deadline.after(config.timeout());
        for (int r = 1; r < members.length; r++) {
            int rank = r;
            try {
                members[r].send(encoded.duplicate(), deadline, () -> String.format(
                        "rendezvous at %s timed out after %d ms sending the %s of %s to rank %d, which is not reading",
                        where, config.timeout().toMillis(), frame.describe(), at, rank));
            } catch (RendezvousException e) {
                throw fail(new RendezvousException(String.format(
                        "rank 0 could not send the %s of %s to rank %d: %s", frame.describe(), at, rank,
                        e.getMessage()), e));
            } catch (IrisTimeoutException e) {
                throw fail(e);
            }
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel channel;
        while (server != null && (channel = server.accept()) != null) {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            FrameChannel stranger = new FrameChannel(channel,
                    Math.min(FrameCodec.JOIN_FRAME_LIMIT, config.maxFrameBytes()),
                    "connection from " + channel.getRemoteAddress());
            channel.register(selector, SelectionKey.OP_READ, stranger);
            strangers.add(stranger);
        }
    }

    private void onJoinTraffic(FrameChannel from) {
        int rank = rankOf(from);
        Frame frame;
        try {
            frame = from.poll();
        } catch (RendezvousException e) {
            if (rank > 0) {
                // It may come back (a restarted process); until then it counts as missing.
                LOG.warn("rank {} left the rendezvous at {} before all ranks joined: {}", rank, where, e.getMessage());
                members[rank] = null;
                joined--;
            } else {
                LOG.warn("rendezvous at {} dropped {}: {}", where, from.peer(), e.getMessage());
                strangers.remove(from);
            }
            reject(from, e.getMessage());
            return;
        }
        if (frame == null) {
            return;
        }
        if (rank > 0) {
            LOG.warn("rank {} sent a {} before all ranks joined; dropping it", rank, frame.describe());
            members[rank] = null;
            joined--;
            reject(from, "protocol error: rank " + rank + " sent a " + frame.describe() + " before the welcome");
            return;
        }
        String problem = joinProblem(from, frame);
        strangers.remove(from);
        if (problem != null) {
            LOG.warn("rendezvous at {} rejected {}: {}", where, from.peer(), problem);
            reject(from, problem);
            return;
        }
        Frame.Join join = (Frame.Join) frame;
        String origin = from.peer();
        from.identify("rank " + join.rank(), config.maxFrameBytes());
        members[join.rank()] = from;
        joined++;
        LOG.debug("rank {} joined the rendezvous at {} ({}; {} of {} ranks present)",
                join.rank(), where, origin, joined + 1, members.length);
    }

    /** Why a join is refused, naming what disagreed, or null when it is acceptable. */
    private String joinProblem(FrameChannel from, Frame frame) {
        if (!(frame instanceof Frame.Join join)) {
            return from.peer() + " sent a " + frame.describe() + " instead of a join frame";
        }
        if (join.magic() != FrameCodec.MAGIC) {
            return String.format("%s is not an Iris rendezvous client (magic 0x%08x, expected 0x%08x)",
                    from.peer(), join.magic(), FrameCodec.MAGIC);
        }
        int rank = join.rank();
        if (join.version() != FrameCodec.PROTOCOL_VERSION) {
            return String.format("rank %d speaks rendezvous protocol version %d, rank 0 speaks %d",
                    rank, join.version(), FrameCodec.PROTOCOL_VERSION);
        }
        if (!join.jobToken().equals(config.jobToken())) {
            // Fingerprints, not the tokens: the token is the job's shared secret, and this
            // message goes to whoever connected.
            return String.format("rank %d sent job token %s, expected %s (SHA-256 prefixes; tokens are not shown)",
                    rank, fingerprint(join.jobToken()), fingerprint(config.jobToken()));
        }
        if (join.worldSize() != members.length) {
            return String.format("rank %d says world size %d, rank 0 has %d", rank, join.worldSize(), members.length);
        }
        if (rank == 0) {
            return "a peer (" + from.peer() + ") claims rank 0, which is the rank hosting the rendezvous";
        }
        if (rank < 0 || rank >= members.length) {
            return String.format("rank %d is out of range: world size is %d, so other ranks are 1..%d",
                    rank, members.length, members.length - 1);
        }
        if (members[rank] != null) {
            return String.format("duplicate rank %d: rank %d has already joined", rank, rank);
        }
        return null;
    }

    /** Everyone is here: stop listening, turn away stragglers, and release the members. */
    private void admitted() throws IOException {
        server.close();
        server = null;
        for (FrameChannel stranger : strangers) {
            reject(stranger, "rendezvous at " + where + " is already complete: all "
                    + members.length + " ranks have joined");
        }
        strangers.clear();
        answerAll(new Frame.Welcome(), "step 0 (join)");
        LOG.debug("all {} ranks joined the rendezvous at {}", members.length, where);
    }

    private void reject(FrameChannel channel, String reason) {
        channel.sendAndClose(FrameCodec.encodeFailure(false, reason, config.maxFrameBytes()));
    }

    /**
     * Tells every connected peer why rank 0 gives up, so that none waits out its own timeout,
     * then releases everything. Returns {@code e} for the caller to throw.
     */
    private <E extends IrisException> E fail(E e) {
        if (!closed) {
            LOG.debug("rank 0 gives up on the rendezvous at {}: {}", where, e.getMessage());
            ByteBuffer notice = FrameCodec.encodeFailure(e instanceof IrisTimeoutException, e.getMessage(),
                    config.maxFrameBytes());
            for (FrameChannel member : members) {
                if (member != null) {
                    member.sendAndClose(notice == null ? null : notice.duplicate());
                }
            }
            close();
        }
        return e;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (FrameChannel member : members) {
            FrameChannel.closeQuietly(member);
        }
        strangers.forEach(FrameChannel::closeQuietly);
        strangers.clear();
        FrameChannel.closeQuietly(server);
        FrameChannel.closeQuietly(selector);
    }

    private int rankOf(FrameChannel channel) {
        for (int r = 1; r < members.length; r++) {
            if (members[r] == channel) {
                return r;
            }
        }
        return -1;
    }

    private static String fingerprint(String token) {
        if (token.isEmpty()) {
            return "'' (none)";
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private static List<Integer> absentRanks(Object[] byRank) {
        List<Integer> absent = new ArrayList<>();
        for (int r = 1; r < byRank.length; r++) {
            if (byRank[r] == null) {
                absent.add(r);
            }
        }
        return absent;
    }

    private void checkInterrupted(String doing) {
        if (Thread.currentThread().isInterrupted()) {
            // Selector.select returns at once while the flag is set; fail instead of spinning.
            throw fail(new RendezvousException("rank 0 was interrupted while " + doing));
        }
    }
}

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
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rank 0's side: listens, admits the other ranks, and serves every collective step by
 * collecting one request from each member and answering all of them.
 *
 * <p>All of it runs on the calling thread with one selector over the listening socket and
 * the member connections, so there is no server thread to leak, a member that drops is seen
 * whichever rank it is, and every wait ends at the step's deadline.
 *
 * <p>A connection is a member only once it has proven that it holds the job's secret
 * ({@link Handshake}). Until then it is pending, and what pending connections may cost is
 * bounded ({@link JoinLimits}): how many there are, how long each may take, and how much each
 * may make rank 0 read; running out of file descriptors pauses accepting instead of failing
 * ({@link Acceptor}). Strangers flooding the port therefore delay the real ranks by little.
 */
final class RootHub implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(RootHub.class);

    /** Refusals logged as warnings per rendezvous; the rest go to debug, so a flood cannot flood the log. */
    static final int LOGGED_REFUSALS = 5;
    /** New connections taken per wake-up, so that a burst cannot starve the handshakes in progress. */
    private static final int ACCEPTS_PER_ROUND = 64;

    private final RendezvousConfig config;
    private final JoinLimits limits;
    private final String where;
    private final int boundPort;
    private final Selector selector;
    private final Handshake handshake;
    private ServerSocketChannel server;                            // null once everyone joined
    private final SelectionKey serverKey;
    private final Acceptor acceptor;
    private final FrameChannel[] members;                          // by rank; [0] stays null
    // Oldest first. Copy-on-write: close() may run on another thread to abort a wait.
    private final List<PendingJoin> pending = new CopyOnWriteArrayList<>();
    private int joined;
    private int refusals;
    private volatile boolean closed;

    private RootHub(RendezvousConfig config, JoinLimits limits, Handshake handshake, Selector selector,
                    ServerSocketChannel server, SelectionKey serverKey, UnaryOperator<Acceptor.Source> source) {
        this.config = config;
        this.limits = limits;
        this.handshake = handshake;
        this.selector = selector;
        this.server = server;
        this.serverKey = serverKey;
        this.boundPort = server.socket().getLocalPort();
        this.where = RendezvousConfig.address(config.host(), boundPort);
        this.members = new FrameChannel[config.worldSize()];
        this.acceptor = new Acceptor(source.apply(server::accept), where, this::dropOnePending);
    }

    /** Binds to exactly the configured address; ranks may connect from now on. */
    static RootHub listen(RendezvousConfig config) {
        return listen(config, JoinLimits.forConfig(config), UnaryOperator.identity());
    }

    /**
     * With explicit limits, and a wrapper around the listening socket's accept through which
     * tests make accepting fail.
     */
    static RootHub listen(RendezvousConfig config, JoinLimits limits, UnaryOperator<Acceptor.Source> source) {
        InetSocketAddress address = config.socketAddress();
        JobSecret secret = config.secret();
        JobSecret.requireSecretOrLoopback(secret, 0, address, RendezvousConfig.address(config.host(), config.port()));
        // Before binding: its random source must be open before strangers can use up descriptors.
        Handshake handshake = new Handshake(secret);
        Selector selector = null;
        ServerSocketChannel server = null;
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open();
            // A restarted job must be able to bind while the last run's connections sit in TIME_WAIT.
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(address, Math.max(limits.maxPending(), config.worldSize()));
            server.configureBlocking(false);
            SelectionKey serverKey = server.register(selector, SelectionKey.OP_ACCEPT);
            RootHub hub = new RootHub(config, limits, handshake, selector, server, serverKey, source);
            LOG.debug("rank 0 listening at {} for a world of {}", hub.where, config.worldSize());
            return hub;
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
                dropExpiredHandshakes();
                long wait = deadline.waitMillis();
                if (!pending.isEmpty()) {
                    wait = Math.min(wait, pending.get(0).deadline.waitMillis()); // the oldest expires first
                }
                boolean paused = acceptor.isPaused();
                serverKey.interestOps(paused ? 0 : SelectionKey.OP_ACCEPT);
                if (paused) {
                    wait = Math.min(wait, acceptor.pauseLeftMillis());
                }
                selector.select(wait);
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isAcceptable()) {
                        acceptSome();
                    } else if (key.isValid() && key.isReadable()) {
                        if (key.attachment() instanceof PendingJoin join) {
                            onHandshakeTraffic(join);
                        } else {
                            onMemberTrafficBeforeWelcome((FrameChannel) key.attachment());
                        }
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

    /** Takes up to a round's worth of new connections as pending ones. */
    private void acceptSome() throws IOException {
        for (int i = 0; i < ACCEPTS_PER_ROUND && server != null; i++) {
            SocketChannel channel = acceptor.next();
            if (channel == null) {
                return;
            }
            if (pending.size() >= limits.maxPending()) {
                dropOnePending();
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                FrameChannel link = new FrameChannel(channel,
                        Math.min(FrameCodec.HANDSHAKE_FRAME_LIMIT, config.maxFrameBytes()),
                        "connection from " + channel.getRemoteAddress());
                PendingJoin join = new PendingJoin(link, Deadline.after(limits.handshakeTimeout()));
                channel.register(selector, SelectionKey.OP_READ, join);
                pending.add(join);
            } catch (IOException e) {
                // Gone between accept and here (reset by its peer); nothing to admit or to tell.
                LOG.debug("rendezvous at {} lost a connection while accepting it: {}", where, FrameReader.reason(e));
                FrameChannel.closeQuietly(channel);
            }
        }
    }

    /**
     * Makes room: drops the oldest pending connection that has not even sent a join frame, else
     * the oldest of all. Dropped without a notice: a real rank sees its connection close
     * unanswered and tries again, while a notice would read as a verdict.
     */
    private void dropOnePending() {
        PendingJoin victim = null;
        for (PendingJoin join : pending) {
            if (join.silent()) {
                victim = join;
                break;
            }
        }
        if (victim == null && !pending.isEmpty()) {
            victim = pending.get(0);
        }
        if (victim != null) {
            pending.remove(victim);
            noteRefusal(victim.channel.peer(), "dropped to make room: " + limits.maxPending()
                    + " connections are already waiting to authenticate");
            victim.channel.close();
        }
    }

    /** Closes pending connections whose handshake took longer than allowed; the oldest expire first. */
    private void dropExpiredHandshakes() {
        while (!pending.isEmpty() && pending.get(0).deadline.expired()) {
            PendingJoin late = pending.remove(0);
            noteRefusal(late.channel.peer(), "did not complete the handshake within "
                    + limits.handshakeTimeout().toMillis() + " ms");
            late.channel.close();
        }
    }

    private void onHandshakeTraffic(PendingJoin join) {
        FrameChannel from = join.channel;
        Frame frame;
        String refusal;
        try {
            frame = from.poll();
            if (frame == null) {
                return;
            }
            refusal = join.advance(frame, handshake, config.maxFrameBytes());
        } catch (RendezvousException e) {
            refusal = e.getMessage();
        }
        if (refusal == null && !join.authenticated()) {
            return;
        }
        pending.remove(join);
        if (refusal == null) {
            refusal = claimProblem(join.claim(), from);
        }
        if (refusal != null) {
            refuse(from, refusal);
            return;
        }
        Frame.Join claim = join.claim();
        if (!from.offer(FrameCodec.encode(new Frame.Accept(join.rootProof(handshake)), config.maxFrameBytes()))) {
            noteRefusal(from.peer(), "rank " + claim.rank() + " does not take rank 0's accept frame");
            from.close();
            return;
        }
        String origin = from.peer();
        from.identify("rank " + claim.rank(), config.maxFrameBytes());
        from.channel().keyFor(selector).attach(from);
        members[claim.rank()] = from;
        joined++;
        LOG.debug("rank {} joined the rendezvous at {} ({}; {} of {} ranks present)",
                claim.rank(), where, origin, joined + 1, members.length);
    }

    /** A member is talking before the welcome: it closed (it may come back) or broke the protocol. */
    private void onMemberTrafficBeforeWelcome(FrameChannel from) {
        int rank = rankOf(from);
        Frame frame;
        try {
            frame = from.poll();
        } catch (RendezvousException e) {
            // It may come back (a restarted process); until then it counts as missing.
            LOG.warn("rank {} left the rendezvous at {} before all ranks joined: {}", rank, where, e.getMessage());
            members[rank] = null;
            joined--;
            reject(from, e.getMessage());
            return;
        }
        if (frame == null) {
            return;
        }
        LOG.warn("rank {} sent a {} before all ranks joined; dropping it", rank, frame.describe());
        members[rank] = null;
        joined--;
        reject(from, "protocol error: rank " + rank + " sent a " + frame.describe() + " before the welcome");
    }

    /**
     * Why an authenticated peer's claim is refused, or null when it may join. Checked only after
     * authentication: a stranger learns nothing about the job, not even its world size.
     */
    private String claimProblem(Frame.Join join, FrameChannel from) {
        int rank = join.rank();
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
        for (PendingJoin join : pending) {
            reject(join.channel, "rendezvous at " + where + " is already complete: all "
                    + members.length + " ranks have joined");
        }
        pending.clear();
        answerAll(new Frame.Welcome(), "step 0 (join)");
        LOG.debug("all {} ranks joined the rendezvous at {}", members.length, where);
        if (refusals > LOGGED_REFUSALS) {
            LOG.info("rendezvous at {} turned away {} connections that did not join properly (the first {} logged"
                    + " as warnings, the rest at debug level)", where, refusals, LOGGED_REFUSALS);
        }
    }

    /** Tells a refused peer why, and logs it; see {@link #noteRefusal}. */
    private void refuse(FrameChannel channel, String reason) {
        noteRefusal(channel.peer(), reason);
        reject(channel, reason);
    }

    private void noteRefusal(String peer, String reason) {
        refusals++;
        if (refusals <= LOGGED_REFUSALS) {
            LOG.warn("rendezvous at {} turned away {}: {}", where, peer, reason);
        } else {
            LOG.debug("rendezvous at {} turned away {}: {}", where, peer, reason);
        }
    }

    /** How many connections this hub turned away so far; for tests. */
    int refusals() {
        return refusals;
    }

    /** How many accepts failed for lack of file descriptors; for tests. */
    int descriptorExhaustions() {
        return acceptor.exhaustions();
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
        pending.forEach(join -> join.channel.close());
        pending.clear();
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

package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisTimeoutException;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices that a rank of the job is gone, so that nobody waits out a deadline for a dead process.
 *
 * <p>Every rank other than 0 keeps one TCP connection to rank 0's watchdog, set up through the
 * rendezvous (rank 0 binds an ephemeral port on the rendezvous address and broadcasts it with a
 * random nonce; a connection that does not present the nonce is dropped). A thread on each rank
 * sends a small heartbeat on its connections every {@code timeout / 4} (at most every second) and
 * reads theirs. A rank is lost when
 * <ul>
 * <li>its connection closes without a goodbye: the process ended, crashed or was killed (the
 *     operating system closes a dead process's sockets at once, SIGKILL included), or</li>
 * <li>nothing arrived from it for {@code timeout}: the process hangs, or its host does.</li>
 * </ul>
 * Rank 0 tells every other rank which rank it lost; a rank that loses its connection to rank 0
 * has lost rank 0. The first loss is handed to the listener, once, on the watchdog's thread
 * ({@code Iris} sets the device abort word there, so that kernels stop spinning, and closes the
 * rendezvous, so that host-side waits end). A normal {@link #close()} says goodbye first, so a rank
 * that finishes is not mistaken for a lost one.
 *
 * <pre>{@code
 * try (RankWatchdog watchdog = RankWatchdog.start(rdv, config, Duration.ofSeconds(30),
 *         loss -> System.err.println("lost " + loss.describe()))) {
 *     ...   // collective work; a dead peer shows up as watchdog.loss()
 * }
 * }</pre>
 *
 * <p>Starting is collective (a broadcast and a barrier on the rendezvous): every rank calls it at
 * the same step. One thread per rank, named {@code iris-watchdog-rank-N}; {@link #close()} ends it.
 */
public final class RankWatchdog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RankWatchdog.class);

    static final int HELLO_MAGIC = 0x49574447; // "IWDG"
    static final int NONCE_BYTES = 16;
    /** magic, rank, nonce. */
    static final int HELLO_BYTES = 4 + 4 + NONCE_BYTES;
    /** type, reason, two spare bytes, rank. */
    static final int MESSAGE_BYTES = 8;
    static final byte HEARTBEAT = 1;
    static final byte LOST = 2;
    static final byte BYE = 3;
    static final byte REASON_CLOSED = 1;
    static final byte REASON_SILENT = 2;
    static final byte REASON_PROTOCOL = 3;

    private static final long MAX_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long JOIN_MILLIS = 5_000;
    /**
     * Connections rank 0 holds before they say hello. Beyond it the oldest is dropped: a flood of
     * silent connections costs a bounded number of descriptors and cannot keep a rank out.
     */
    static final int MAX_STRANGERS = 64;

    /** Called once, on the watchdog's thread, with the first rank found lost. Keep it short. */
    @FunctionalInterface
    public interface Listener {
        void rankLost(Loss loss);
    }

    /**
     * A rank found gone.
     *
     * @param rank       the lost rank
     * @param reason     why, e.g. "its connection closed without a goodbye (...)"
     * @param reportedBy the rank that noticed it: this rank, or rank 0 passing it on
     */
    public record Loss(int rank, String reason, int reportedBy) {
        /** "rank 1 was lost: its connection ... (noticed by rank 0)". */
        public String describe() {
            return "rank " + rank + " was lost: " + reason + " (noticed by rank " + reportedBy + ")";
        }
    }

    private final int rank;
    private final int world;
    private final long timeoutNanos;
    private final long intervalNanos;
    private final Listener listener;
    private final Peer[] peers;       // by rank; null for this rank and, on members, all but rank 0
    private final Selector selector;  // null when there is nobody to watch
    private final Thread thread;      // null likewise
    private final AtomicReference<Loss> loss = new AtomicReference<>();
    private final CountDownLatch lost = new CountDownLatch(1);
    private final int boundPort;      // rank 0's watchdog port, for tests; 0 elsewhere
    private volatile boolean closing;
    private volatile boolean abandon;  // tests: end like a killed process, without goodbyes
    private volatile boolean silent;   // tests: stop sending, like a hung process

    private RankWatchdog(RendezvousConfig config, Duration timeout, Listener listener, Peer[] peers, int boundPort)
            throws IOException {
        this.rank = config.rank();
        this.world = config.worldSize();
        this.timeoutNanos = timeout.toNanos();
        this.intervalNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(MAX_INTERVAL_NANOS, timeoutNanos / 4));
        this.listener = listener;
        this.peers = peers;
        this.boundPort = boundPort;
        boolean anyone = false;
        for (Peer p : peers) {
            anyone |= p != null;
        }
        if (anyone) {
            this.selector = Selector.open();
            long now = System.nanoTime();
            for (Peer p : peers) {
                if (p != null) {
                    p.lastHeard = now;
                    p.channel.register(selector, SelectionKey.OP_READ, p);
                }
            }
            this.thread = new Thread(this::run, "iris-watchdog-rank-" + rank);
            thread.setDaemon(true);
        } else {
            this.selector = null;
            this.thread = null;
        }
    }

    /**
     * Collective: connects this rank's watchdog (rank 0 accepts every other rank's connection,
     * the others connect to it) over the rendezvous's address, then starts watching.
     *
     * @param rendezvous the job's rendezvous, at the same step on every rank
     * @param config     its configuration (address, rank, world, and the timeout for setting up)
     * @param timeout    how long a rank may stay silent before it counts as lost; a rank whose
     *                   process ends is noticed at once, whatever this is
     * @param listener   told about the first lost rank
     * @throws IrisTimeoutException if not every rank connected within the rendezvous timeout
     * @throws RendezvousException  if the address cannot be used or the rendezvous fails
     */
    public static RankWatchdog start(Rendezvous rendezvous, RendezvousConfig config, Duration timeout, Listener listener) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("rank " + config.rank() + ": watchdog timeout must be a positive duration, got "
                    + timeout);
        }
        Peer[] peers = new Peer[config.worldSize()];
        int port = 0;
        try {
            if (config.worldSize() > 1) {
                port = config.rank() == 0 ? acceptAll(rendezvous, config, peers) : connect(rendezvous, config, peers);
                rendezvous.barrier();  // every connection is in place before anyone relies on it
            }
            RankWatchdog watchdog = new RankWatchdog(config, timeout, listener, peers, port);
            if (watchdog.thread != null) {
                watchdog.thread.start();
            }
            return watchdog;
        } catch (IOException e) {
            closeAll(peers);
            throw new RendezvousException("rank " + config.rank() + ": cannot set up the rank watchdog at "
                    + RendezvousConfig.address(config.host(), port) + ": " + FrameReader.reason(e), e);
        } catch (RuntimeException e) {
            closeAll(peers);
            throw e;
        }
    }

    /** Rank 0: binds, tells the others where, and takes one connection from each. Returns the port. */
    private static int acceptAll(Rendezvous rendezvous, RendezvousConfig config, Peer[] peers) throws IOException {
        byte[] nonce = new byte[NONCE_BYTES];
        new SecureRandom().nextBytes(nonce);
        InetSocketAddress address = new InetSocketAddress(config.socketAddress().getAddress(), 0);
        try (ServerSocketChannel server = ServerSocketChannel.open(); Selector accepting = Selector.open()) {
            server.bind(address, Math.max(64, config.worldSize()));
            server.configureBlocking(false);
            server.register(accepting, SelectionKey.OP_ACCEPT);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            rendezvous.broadcast(ByteBuffer.allocate(4 + NONCE_BYTES).putInt(port).put(nonce).array(), 0);
            List<SocketChannel> strangers = new ArrayList<>();
            Deadline deadline = Deadline.after(config.timeout());
            int connected = 0;
            try {
                while (connected < config.worldSize() - 1) {
                    if (deadline.expired()) {
                        List<Integer> missing = new ArrayList<>();
                        for (int r = 1; r < peers.length; r++) {
                            if (peers[r] == null) missing.add(r);
                        }
                        throw new IrisTimeoutException("rank 0: the watchdog connections of ranks " + missing
                                + " did not arrive within " + config.timeout().toMillis() + " ms");
                    }
                    accepting.select(deadline.waitMillis());
                    Iterator<SelectionKey> keys = accepting.selectedKeys().iterator();
                    while (keys.hasNext()) {
                        SelectionKey key = keys.next();
                        keys.remove();
                        if (key.isValid() && key.isAcceptable()) {
                            SocketChannel c;
                            while ((c = server.accept()) != null) {
                                if (strangers.size() >= MAX_STRANGERS) {
                                    SocketChannel oldest = strangers.remove(0);
                                    oldest.keyFor(accepting).cancel();
                                    FrameChannel.closeQuietly(oldest);
                                }
                                c.configureBlocking(false);
                                c.register(accepting, SelectionKey.OP_READ, ByteBuffer.allocate(HELLO_BYTES));
                                strangers.add(c);
                            }
                        } else if (key.isValid() && key.isReadable()) {
                            SocketChannel c = (SocketChannel) key.channel();
                            ByteBuffer hello = (ByteBuffer) key.attachment();
                            int n;
                            try {
                                n = c.read(hello);
                            } catch (IOException e) {
                                n = -1;
                            }
                            if (n < 0) {
                                key.cancel();
                                strangers.remove(c);
                                FrameChannel.closeQuietly(c);
                            } else if (!hello.hasRemaining()) {
                                key.cancel();
                                strangers.remove(c);
                                int r = admit(hello.flip(), nonce, peers, c);
                                if (r > 0) {
                                    peers[r] = new Peer(r, c);
                                    connected++;
                                } else {
                                    FrameChannel.closeQuietly(c);
                                }
                            }
                        }
                    }
                }
            } finally {
                strangers.forEach(FrameChannel::closeQuietly);
            }
            return port;
        }
    }

    /** The rank a hello names if it is acceptable, else 0 (and why is logged). */
    private static int admit(ByteBuffer hello, byte[] nonce, Peer[] peers, SocketChannel from) {
        String who;
        try {
            who = String.valueOf(from.getRemoteAddress());
        } catch (IOException e) {
            who = "a connection";
        }
        int magic = hello.getInt();
        int r = hello.getInt();
        byte[] theirs = new byte[NONCE_BYTES];
        hello.get(theirs);
        if (magic != HELLO_MAGIC || !MessageDigest.isEqual(theirs, nonce)) {
            LOG.warn("rank 0: watchdog dropped {}: not a rank of this job (wrong magic or nonce)", who);
            return 0;
        }
        if (r < 1 || r >= peers.length || peers[r] != null) {
            LOG.warn("rank 0: watchdog dropped {}: rank {} is out of range or already connected", who, r);
            return 0;
        }
        return r;
    }

    /** A rank other than 0: learns rank 0's watchdog port and connects. Returns 0. */
    private static int connect(Rendezvous rendezvous, RendezvousConfig config, Peer[] peers) throws IOException {
        ByteBuffer where = ByteBuffer.wrap(rendezvous.broadcast(null, 0));
        int port = where.getInt();
        byte[] nonce = new byte[NONCE_BYTES];
        where.get(nonce);
        SocketChannel c = SocketChannel.open();
        try {
            c.socket().connect(new InetSocketAddress(config.socketAddress().getAddress(), port),
                    (int) Math.min(Integer.MAX_VALUE, config.timeout().toMillis()));
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES).putInt(HELLO_MAGIC).putInt(config.rank()).put(nonce).flip();
            while (hello.hasRemaining()) {
                c.write(hello);  // blocking: 24 bytes into an empty socket
            }
            c.configureBlocking(false);
        } catch (IOException | RuntimeException e) {
            FrameChannel.closeQuietly(c);
            throw e;
        }
        peers[0] = new Peer(0, c);
        return 0;
    }

    // ---- what callers see ------------------------------------------------------------------

    /** The first rank found lost, or null while every rank is there. */
    public Loss loss() {
        return loss.get();
    }

    /** Waits at most {@code limit} for a loss; returns it, or null if none was found meanwhile. */
    public Loss awaitLoss(Duration limit) {
        try {
            lost.await(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return loss.get();
    }

    /** Rank 0's watchdog port (0 on other ranks); for tests. */
    int boundPort() {
        return boundPort;
    }

    /**
     * Says goodbye to the peers (so that they do not take this rank for lost), stops the thread
     * and closes the connections. Idempotent.
     */
    @Override
    public void close() {
        stop();
    }

    /** Tests: ends like a killed process: connections close without a goodbye. */
    void crashForTesting() {
        abandon = true;
        stop();
    }

    /** Tests: stops sending heartbeats, like a process that hangs. */
    void silenceForTesting() {
        silent = true;
    }

    private void stop() {
        closing = true;
        if (thread == null) {
            return;
        }
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(JOIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("rank {}: watchdog thread did not stop within {} ms", rank, JOIN_MILLIS);
            }
        }
    }

    // ---- the watchdog's thread ---------------------------------------------------------------

    private void run() {
        try {
            long nextBeat = System.nanoTime();
            while (!closing) {
                long now = System.nanoTime();
                if (now - nextBeat >= 0) {
                    beat(now);
                    nextBeat = now + intervalNanos;
                }
                long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextBeat - now));
                selector.select(waitMillis);
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isReadable()) {
                        read((Peer) key.attachment());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("rank {}: watchdog failed and stops watching: {}", rank, e.toString(), e);
        } finally {
            for (Peer p : peers) {
                if (p != null && p.open) {
                    if (!abandon) {
                        send(p, BYE, (byte) 0, rank);
                    }
                    p.close();
                }
            }
            FrameChannel.closeQuietly(selector);
        }
    }

    /** Heartbeats out; peers silent for longer than the timeout are lost. */
    private void beat(long now) {
        for (Peer p : peers) {
            if (p == null || !p.open) {
                continue;
            }
            if (now - p.lastHeard > timeoutNanos && !p.leaving) {
                found(p.rank, REASON_SILENT, rank);
                p.close();
                continue;
            }
            if (!silent) {
                send(p, HEARTBEAT, (byte) 0, rank);
            }
        }
    }

    private void read(Peer p) {
        int n;
        try {
            n = p.channel.read(p.in);
        } catch (IOException e) {
            n = -1;
        }
        p.in.flip();
        while (p.in.remaining() >= MESSAGE_BYTES) {
            byte type = p.in.get();
            byte reason = p.in.get();
            p.in.getShort();
            int subject = p.in.getInt();
            p.lastHeard = System.nanoTime();
            switch (type) {
                case HEARTBEAT -> { }
                case BYE -> p.leaving = true;
                case LOST -> {
                    if (p.rank == 0 && subject > 0 && subject < world && subject != rank) {
                        found(subject, reason, 0);
                    } else {
                        found(p.rank, REASON_PROTOCOL, rank);
                        p.close();
                        return;
                    }
                }
                default -> {
                    found(p.rank, REASON_PROTOCOL, rank);
                    p.close();
                    return;
                }
            }
        }
        p.in.compact();
        if (n < 0) {
            if (!p.leaving) {
                found(p.rank, REASON_CLOSED, rank);
            }
            p.close();
        }
    }

    /** Records the first loss, passes it on (rank 0) and tells the listener. */
    private void found(int lostRank, byte reason, int reportedBy) {
        if (closing) {
            return;  // this rank is closing: peers leaving now are no news
        }
        Loss l = new Loss(lostRank, describe(reason), reportedBy);
        if (!loss.compareAndSet(null, l)) {
            return;
        }
        LOG.error("rank {}: {}", rank, l.describe());
        if (rank == 0) {
            for (Peer p : peers) {
                if (p != null && p.open && p.rank != lostRank) {
                    send(p, LOST, reason, lostRank);
                }
            }
        }
        lost.countDown();
        try {
            listener.rankLost(l);
        } catch (RuntimeException e) {
            LOG.error("rank {}: the watchdog's listener failed: {}", rank, e.toString(), e);
        }
    }

    private String describe(byte reason) {
        return switch (reason) {
            case REASON_CLOSED -> "its watchdog connection closed without a goodbye (the process ended, crashed or was killed)";
            case REASON_SILENT -> "nothing arrived from it for " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms (the watchdog timeout): the process or its host hangs";
            default -> "its watchdog connection carried something other than the watchdog's messages";
        };
    }

    /** Queues one message and writes what the socket takes; a full queue drops heartbeats. */
    private static void send(Peer p, byte type, byte reason, int subject) {
        if (p.out.remaining() < MESSAGE_BYTES) {
            return;  // the peer has not read for a long time; silence will decide
        }
        p.out.put(type).put(reason).putShort((short) 0).putInt(subject);
        p.out.flip();
        try {
            p.channel.write(p.out);
        } catch (IOException e) {
            // The read side sees the end of the connection and decides.
        }
        p.out.compact();
    }

    private static void closeAll(Peer[] peers) {
        for (Peer p : peers) {
            if (p != null) {
                p.close();
            }
        }
    }

    /** One connection: rank 0 has one per other rank, every other rank one to rank 0. */
    private static final class Peer {
        final int rank;
        final SocketChannel channel;
        final ByteBuffer in = ByteBuffer.allocate(64 * MESSAGE_BYTES);
        final ByteBuffer out = ByteBuffer.allocate(512 * MESSAGE_BYTES);
        long lastHeard;
        boolean leaving;
        boolean open = true;

        Peer(int rank, SocketChannel channel) {
            this.rank = rank;
            this.channel = channel;
        }

        void close() {
            open = false;
            FrameChannel.closeQuietly(channel);
        }
    }
}

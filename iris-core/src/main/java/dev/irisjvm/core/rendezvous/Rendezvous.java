package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisTimeoutException;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small TCP meeting point for the ranks of one job, hosted by rank 0: used at init to swap
 * CUDA IPC handles and heap bases, and for host-side checks. Never on a data path.
 *
 * <pre>{@code
 * var cfg = new RendezvousConfig(rank, worldSize, "10.0.0.1", 29500, secret,  // same secret on every rank
 *         Duration.ofSeconds(60), RendezvousConfig.DEFAULT_MAX_FRAME_BYTES);
 * try (Rendezvous rdv = Rendezvous.connect(cfg)) {        // returns once all ranks joined
 *     byte[][] handles = rdv.allGather(myIpcHandle);      // handles[r] is rank r's
 *     byte[] plan = rdv.broadcast(rank == 0 ? makePlan() : null, 0);
 *     rdv.barrier();
 * }
 * }</pre>
 *
 * <p>Rank 0 listens on the configured address and takes part as a member in-process; the other
 * ranks connect, retrying while rank 0 is not up yet. Every operation is collective: all ranks
 * must call the same operations in the same order. Each carries a step number, so a rank that
 * calls a different one is reported ({@code "rank 1 is at step 5 (allGather), rank 0 at step 5
 * (barrier)"}) instead of its data being mixed into the wrong step.
 *
 * <p>Only ranks that hold the job's secret get in: each proves it to rank 0, and rank 0 to it,
 * without sending it (HMAC-SHA256 over fresh nonces from both sides, the rank and the world
 * size). Without a secret ({@code jobToken} empty) the rendezvous refuses non-loopback addresses,
 * {@code 0.0.0.0} included. Strangers that connect are bounded in number and in time, so they
 * cannot keep the real ranks out.
 *
 * <p>Every wait ends: joining and each step wait at most the configured timeout (members allow
 * rank 0 up to one second more to report why it gave up), then throw {@link IrisTimeoutException}
 * naming the missing ranks or the step. Any other failure throws {@link RendezvousException};
 * rank 0 passes its reason on to all members, so they fail at once instead of timing out. After
 * a failure the rendezvous is unusable, and every later call throws.
 *
 * <p>No thread is started: all I/O runs on the calling thread over non-blocking sockets. An
 * instance is meant for one thread, except {@link #close()}, which may be called from any
 * thread to abort a waiting call.
 */
public final class Rendezvous implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Rendezvous.class);

    private final RendezvousConfig config;
    private final Transport transport; // null when worldSize is 1: there is nobody to talk to
    private final int boundPort;
    private final Object opLock = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();
    private long step;                  // guarded by opLock; 0 is the join
    private volatile IrisException failure;

    private Rendezvous(RendezvousConfig config, Transport transport, int boundPort) {
        this.config = config;
        this.transport = transport;
        this.boundPort = boundPort;
    }

    /**
     * Joins the rendezvous and returns once all ranks have joined. Rank 0 listens and waits
     * for the others; every other rank connects to rank 0.
     *
     * @throws IrisTimeoutException if not all ranks joined within the timeout; the message
     *                              names the ranks that never joined
     * @throws RendezvousException  if this rank was rejected (secret, world size, duplicate rank),
     *                              rank 0 could not prove that it holds the secret, or the address
     *                              cannot be used (among others: not loopback, and no secret set)
     */
    public static Rendezvous connect(RendezvousConfig config) {
        Objects.requireNonNull(config, "config");
        if (config.rank() == 0) {
            try (Listener listener = listen(config)) {
                return listener.awaitMembers();
            }
        }
        if (config.worldSize() == 1) {
            return new Rendezvous(config, null, config.port());
        }
        return new Rendezvous(config, MemberLink.join(config), config.port());
    }

    /**
     * Rank 0 only: binds now and returns before anyone joins, so that the port is known when
     * the configured one is 0 (ephemeral) and can be handed to the other ranks.
     *
     * <pre>{@code
     * try (Rendezvous.Listener listener = Rendezvous.listen(cfg.withPort(0))) {
     *     publish(listener.boundPort());              // however the other ranks learn it
     *     Rendezvous rdv = listener.awaitMembers();
     * }
     * }</pre>
     *
     * @throws IllegalArgumentException if {@code config.rank()} is not 0
     * @throws RendezvousException      if the address cannot be bound
     */
    public static Listener listen(RendezvousConfig config) {
        Objects.requireNonNull(config, "config");
        if (config.rank() != 0) {
            throw new IllegalArgumentException("listen is for rank 0, which hosts the rendezvous; rank "
                    + config.rank() + " should call connect");
        }
        return new Listener(config, config.worldSize() == 1 ? null : RootHub.listen(config));
    }

    public int rank() {
        return config.rank();
    }

    public int worldSize() {
        return config.worldSize();
    }

    /**
     * The port of the rendezvous: on rank 0 the one actually bound (which differs from the
     * configured one when that is 0); on other ranks, and with world size 1 where nothing is
     * bound, the configured one.
     */
    public int boundPort() {
        return boundPort;
    }

    /**
     * Every rank's bytes, in rank order, identical on every rank; sizes may differ per rank and
     * may be 0.
     *
     * <pre>{@code byte[][] bases = rdv.allGather(ByteBuffer.allocate(8).putLong(heapBase).array());}</pre>
     */
    public byte[][] allGather(byte[] mine) {
        Objects.requireNonNull(mine, "allGather: mine must not be null (pass an empty array to contribute nothing)");
        byte[] copy = mine.clone();
        if (transport == null) {
            return local(Collective.ALL_GATHER, 0, new byte[][] {copy});
        }
        return run(Collective.ALL_GATHER, 0, copy);
    }

    /**
     * The root's bytes on every rank.
     *
     * <pre>{@code byte[] handle = rdv.broadcast(rank == 2 ? exportHandle() : null, 2);}</pre>
     *
     * @param valueOnRoot the value on rank {@code root}; ignored (may be null) elsewhere
     * @param root        the rank whose value everyone gets, in {@code [0, worldSize)}, equal on all ranks
     */
    public byte[] broadcast(byte[] valueOnRoot, int root) {
        if (root < 0 || root >= config.worldSize()) {
            throw new IllegalArgumentException("broadcast root must be in [0, " + (config.worldSize() - 1)
                    + "], got " + root);
        }
        byte[] mine = new byte[0];
        if (root == config.rank()) {
            Objects.requireNonNull(valueOnRoot, "broadcast: valueOnRoot must not be null on the root rank " + root);
            mine = valueOnRoot.clone();
        }
        if (transport == null) {
            return local(Collective.BROADCAST, root, new byte[][] {mine})[0];
        }
        return run(Collective.BROADCAST, root, mine)[0];
    }

    /** Returns once every rank has called it, and not before. */
    public void barrier() {
        if (transport == null) {
            local(Collective.BARRIER, 0, new byte[0][]);
            return;
        }
        run(Collective.BARRIER, 0, new byte[0]);
    }

    /** Idempotent; releases the sockets. A call waiting in another thread fails promptly. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (transport != null) {
                transport.close();
            }
            LOG.debug("rank {} closed its rendezvous", config.rank());
        }
    }

    private byte[][] local(Collective op, int root, byte[][] result) {
        synchronized (opLock) {
            ensureUsable(op.describe(step + 1, root));
            step++;
            return result;
        }
    }

    private byte[][] run(Collective op, int root, byte[] payload) {
        synchronized (opLock) {
            String at = op.describe(step + 1, root);
            ensureUsable(at);
            step++;
            try {
                return transport.exchange(step, op, root, payload);
            } catch (RuntimeException e) {
                // After close() from another thread, whatever broke is a consequence; say what caused it.
                IrisException reported = closed.get()
                        ? new RendezvousException("rank " + config.rank() + ": the rendezvous was closed during " + at, e)
                        : asIris(e, at);
                failure = reported;
                transport.close();
                throw reported;
            }
        }
    }

    /** Selector and channel exceptions are unchecked; report them like every other failure. */
    private IrisException asIris(RuntimeException e, String at) {
        if (e instanceof IrisException iris) {
            return iris;
        }
        return new RendezvousException("rank " + config.rank() + " failed at " + at + ": " + e, e);
    }

    private void ensureUsable(String at) {
        if (closed.get()) {
            throw new RendezvousException("rank " + config.rank() + " cannot run " + at
                    + ": the rendezvous is closed");
        }
        IrisException earlier = failure;
        if (earlier != null) {
            throw new RendezvousException("rank " + config.rank() + " cannot run " + at
                    + ": the rendezvous failed earlier: " + earlier.getMessage(), earlier);
        }
    }

    /**
     * Rank 0's rendezvous between binding and everyone joining; see {@link Rendezvous#listen}.
     * Closing it releases the port unless {@link #awaitMembers()} has succeeded, after which
     * the returned {@link Rendezvous} owns everything and closing this does nothing.
     */
    public static final class Listener implements AutoCloseable {
        private final RendezvousConfig config;
        private final RootHub hub; // null when worldSize is 1
        private final AtomicBoolean used = new AtomicBoolean();
        private volatile boolean handedOver;

        private Listener(RendezvousConfig config, RootHub hub) {
            this.config = config;
            this.hub = hub;
        }

        /** The port actually bound; with world size 1 nothing is bound and this is the configured one. */
        public int boundPort() {
            return hub == null ? config.port() : hub.boundPort();
        }

        /**
         * Waits until all other ranks have joined, at most the configured timeout. Call once.
         *
         * @throws IrisTimeoutException  if some never joined; the message names them
         * @throws RendezvousException   if the listener was closed meanwhile, or the wait failed
         * @throws IllegalStateException if called a second time or after {@link #close()}
         */
        public Rendezvous awaitMembers() {
            if (!used.compareAndSet(false, true)) {
                throw new IllegalStateException("awaitMembers may be called once, and not after close");
            }
            if (hub == null) {
                handedOver = true;
                return new Rendezvous(config, null, config.port());
            }
            try {
                hub.awaitMembers();
            } catch (IrisException e) {
                throw e;
            } catch (RuntimeException e) {
                // Selector exceptions are unchecked; the usual cause is close() from another thread.
                hub.close();
                throw new RendezvousException("rank 0: the rendezvous was closed while ranks were joining", e);
            }
            handedOver = true;
            return new Rendezvous(config, hub, hub.boundPort());
        }

        @Override
        public void close() {
            used.set(true);
            if (hub != null && !handedOver) {
                hub.close();
            }
        }
    }
}

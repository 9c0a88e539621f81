package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Rank 0 under load: strangers that stay silent, send garbage or fail the handshake connect
 * while the real ranks (threads of this JVM) join over loopback, and the real ranks still get in.
 */
@Timeout(60)
class RendezvousFloodTest {
    private static final String HOST = "127.0.0.1";
    private static final String SECRET = "flood-test-secret";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** How long the real ranks may take to join while the flood goes on; measured values are far lower. */
    private static final long JOIN_BOUND_MILLIS = 10_000;

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<Socket> held = new ArrayList<>();

    @AfterEach
    void cleanUp() throws InterruptedException {
        synchronized (held) {
            held.forEach(RendezvousFloodTest::closeQuietly);
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "a test thread is still running");
    }

    @Test
    void realRanksJoinWhileStrangersFlood() throws Exception {
        int world = 4;
        int strangerThreads = 3;
        int maxStrangersEach = 600;
        RendezvousConfig root = new RendezvousConfig(0, world, HOST, 0, SECRET, TIMEOUT, 1 << 20);
        try (Rendezvous.Listener listener = Rendezvous.listen(root)) {
            int port = listener.boundPort();
            Future<Rendezvous> zero = pool.submit(listener::awaitMembers);
            AtomicBoolean joined = new AtomicBoolean();
            AtomicInteger strangers = new AtomicInteger();
            List<Future<?>> flood = new ArrayList<>();
            for (int t = 0; t < strangerThreads; t++) {
                Random random = new Random(1000 + t);
                flood.add(pool.submit(() -> {
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                    for (int i = 0; i < maxStrangersEach && !joined.get() && System.nanoTime() < end; i++) {
                        stranger(port, random, i);
                        strangers.incrementAndGet();
                    }
                    return null;
                }));
            }
            // Past rank 0's cap of 64 pending connections in silent ones alone, so that it is dropping some.
            waitFor(() -> strangers.get() >= 240, "the flood to get going");

            long start = System.nanoTime();
            List<Future<Rendezvous>> members = new ArrayList<>();
            for (int r = 1; r < world; r++) {
                RendezvousConfig member = root.withPort(port).withRank(r);
                members.add(pool.submit(() -> Rendezvous.connect(member)));
            }
            List<Rendezvous> ranks = new ArrayList<>();
            try {
                ranks.add(zero.get(JOIN_BOUND_MILLIS, TimeUnit.MILLISECONDS));
                for (Future<Rendezvous> m : members) {
                    ranks.add(m.get(JOIN_BOUND_MILLIS, TimeUnit.MILLISECONDS));
                }
                long joinMillis = (System.nanoTime() - start) / 1_000_000;
                joined.set(true);
                System.out.printf("flood: %d ranks joined in %d ms while %d strangers connected%n",
                        world, joinMillis, strangers.get());
                assertTrue(joinMillis < JOIN_BOUND_MILLIS, "joining took " + joinMillis + " ms");

                List<Future<byte[][]>> gathers = new ArrayList<>();
                for (Rendezvous rdv : ranks) {
                    gathers.add(pool.submit(() -> rdv.allGather(new byte[] {(byte) rdv.rank()})));
                }
                for (Future<byte[][]> g : gathers) {
                    assertArrayEquals(new byte[][] {{0}, {1}, {2}, {3}}, g.get(10, TimeUnit.SECONDS));
                }
            } finally {
                joined.set(true);
                ranks.forEach(Rendezvous::close);
            }
            for (Future<?> f : flood) {
                f.get(20, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aSilentConnectionIsDroppedAtItsHandshakeDeadline() throws Exception {
        RendezvousConfig root = new RendezvousConfig(0, 2, HOST, 0, SECRET, TIMEOUT, 1 << 20);
        try (RootHub hub = RootHub.listen(root, new JoinLimits(64, Duration.ofMillis(300)), UnaryOperator.identity())) {
            Future<?> waiting = pool.submit(() -> {
                hub.awaitMembers();
                return null;
            });
            long start = System.nanoTime();
            try (Socket silent = connect(hub.boundPort())) {
                silent.setSoTimeout(5000);
                assertEquals(-1, silent.getInputStream().read(), "rank 0 should close a silent connection");
            }
            long closedAfter = (System.nanoTime() - start) / 1_000_000;
            assertTrue(closedAfter >= 250 && closedAfter < 3000, "closed after " + closedAfter + " ms");
            assertFalse(waiting.isDone(), "rank 0 must keep waiting for the real rank");
            try (Rendezvous one = Rendezvous.connect(root.withPort(hub.boundPort()).withRank(1))) {
                waiting.get(10, TimeUnit.SECONDS);
                assertEquals(1, one.rank());
            }
        }
    }

    @Test
    void pendingConnectionsAreCappedDroppingTheOldestSilentOnes() throws Exception {
        RendezvousConfig root = new RendezvousConfig(0, 2, HOST, 0, SECRET, TIMEOUT, 1 << 20);
        try (RootHub hub = RootHub.listen(root, new JoinLimits(4, TIMEOUT), UnaryOperator.identity())) {
            Future<?> waiting = pool.submit(() -> {
                hub.awaitMembers();
                return null;
            });
            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    silent.add(connect(hub.boundPort()));
                }
                // Rank 0 keeps the newest four; the six before them are closed, oldest first.
                for (int i = 0; i < 6; i++) {
                    silent.get(i).setSoTimeout(5000);
                    assertEquals(-1, silent.get(i).getInputStream().read(), "connection " + i + " should be dropped");
                }
                try (Rendezvous one = Rendezvous.connect(root.withPort(hub.boundPort()).withRank(1))) {
                    waiting.get(10, TimeUnit.SECONDS);
                    assertEquals(1, one.rank());
                }
                assertTrue(hub.refusals() >= 6, "refusals: " + hub.refusals());
            } finally {
                silent.forEach(RendezvousFloodTest::closeQuietly);
            }
        }
    }

    @Test
    void runningOutOfFileDescriptorsPausesAcceptingAndIsSurvived() throws Exception {
        RendezvousConfig root = new RendezvousConfig(0, 3, HOST, 0, SECRET, TIMEOUT, 1 << 20);
        AtomicInteger failures = new AtomicInteger();
        // The listening socket fails like a process at its descriptor limit, five times over.
        UnaryOperator<Acceptor.Source> exhausted = source -> () -> {
            if (failures.getAndIncrement() < 5) {
                throw new IOException("Too many open files");
            }
            return source.accept();
        };
        try (RootHub hub = RootHub.listen(root, JoinLimits.forConfig(root), exhausted)) {
            Future<?> waiting = pool.submit(() -> {
                hub.awaitMembers();
                return null;
            });
            List<Future<Rendezvous>> members = new ArrayList<>();
            for (int r = 1; r < 3; r++) {
                RendezvousConfig member = root.withPort(hub.boundPort()).withRank(r);
                members.add(pool.submit(() -> Rendezvous.connect(member)));
            }
            waiting.get(15, TimeUnit.SECONDS);
            for (Future<Rendezvous> m : members) {
                m.get(10, TimeUnit.SECONDS).close();
            }
            assertEquals(5, hub.descriptorExhaustions());
        }
        assertTrue(Acceptor.outOfDescriptors(new IOException("Too many open files")));
        assertTrue(Acceptor.outOfDescriptors(new IOException("Too many open files in system")));
        assertFalse(Acceptor.outOfDescriptors(new IOException("Connection reset by peer")));
    }

    /** One stranger: silent and kept open, garbage, or a handshake with the wrong secret. */
    private void stranger(int port, Random random, int i) throws IOException {
        switch (i % 3) {
            case 0 -> {
                Socket silent = connect(port);
                synchronized (held) {
                    held.add(silent);
                }
            }
            case 1 -> {
                try (Socket garbage = connect(port)) {
                    byte[] bytes = new byte[1 + random.nextInt(200)];
                    random.nextBytes(bytes);
                    garbage.getOutputStream().write(bytes);
                    drain(garbage);
                } catch (IOException dropped) {
                    // rank 0 may drop it first; that is its right
                }
            }
            default -> {
                try (HandPlayedRank impostor = new HandPlayedRank(HOST, port, "wrong-" + i, 5000)) {
                    impostor.handshake(1 + random.nextInt(3), 4, FrameCodec.PROTOCOL_VERSION);
                } catch (IOException | RendezvousException dropped) {
                    // dropped to make room, or refused: either way it is out
                }
            }
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(HOST, port), 5000);
        return socket;
    }

    /** Reads until rank 0 closes, at most a few seconds. */
    private static void drain(Socket socket) throws IOException {
        socket.setSoTimeout(5000);
        InputStream in = socket.getInputStream();
        byte[] sink = new byte[4096];
        try {
            for (int i = 0; i < 1000 && in.read(sink) >= 0; i++) {
                // discarding rank 0's notice
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("rank 0 neither answered nor closed within 5 s", e);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // cleanup
        }
    }
}

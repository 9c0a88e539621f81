package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.testing.LiveThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rank watchdog with ranks as threads of this JVM over loopback: a rank that ends without a
 * goodbye (what SIGKILL looks like from outside) or falls silent is reported to every other rank,
 * rank 0's loss included; a rank that closes normally is not; strangers cannot join.
 * {@code RankLossLauncherTest} does the same with real processes and SIGKILL.
 */
@Timeout(30)
class RankWatchdogTest {
    private static final String HOST = "127.0.0.1";
    private static final String TOKEN = "job-7";
    private static final Duration LONG = Duration.ofSeconds(20);

    private final ExecutorService pool = Executors.newCachedThreadPool(r -> new Thread(r, "watchdog-test-rank"));
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** One rank of a test world: its rendezvous, its watchdog and the losses its listener was told. */
    private record Rank(Rendezvous rendezvous, RankWatchdog watchdog, List<RankWatchdog.Loss> losses) {}

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(List.of(), LiveThreads.named("iris-watchdog"), "watchdog threads still alive after close");
    }

    @Test
    void aMemberThatEndsWithoutAGoodbyeIsNoticedByEveryRankAtOnce() throws Exception {
        List<Rank> ranks = world(3, LONG);
        long start = System.nanoTime();
        ranks.get(2).watchdog().crashForTesting();
        for (int r = 0; r < 2; r++) {
            RankWatchdog.Loss loss = ranks.get(r).watchdog().awaitLoss(Duration.ofSeconds(5));
            assertNotNull(loss, "rank " + r + " did not notice");
            assertEquals(2, loss.rank());
            assertEquals(0, loss.reportedBy(), "rank 0 notices, and tells the others");
            assertTrue(loss.reason().contains("closed without a goodbye"), loss.reason());
            assertTrue(loss.describe().startsWith("rank 2 was lost: "), loss.describe());
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(millis < 3000, "took " + millis + " ms; the 20 s timeout must not matter");
        awaitListenerCalls(ranks.get(0), 1);
        awaitListenerCalls(ranks.get(1), 1);
    }

    @Test
    void losingRankZeroIsNoticedByEveryOtherRank() throws Exception {
        List<Rank> ranks = world(3, LONG);
        ranks.get(0).watchdog().crashForTesting();
        for (int r = 1; r < 3; r++) {
            RankWatchdog.Loss loss = ranks.get(r).watchdog().awaitLoss(Duration.ofSeconds(5));
            assertNotNull(loss, "rank " + r + " did not notice rank 0's end");
            assertEquals(0, loss.rank());
            assertEquals(r, loss.reportedBy());
            awaitListenerCalls(ranks.get(r), 1);
        }
    }

    @Test
    void aSilentRankIsLostAfterTheTimeout() throws Exception {
        Duration timeout = Duration.ofMillis(800);
        List<Rank> ranks = world(2, timeout);
        long start = System.nanoTime();
        ranks.get(1).watchdog().silenceForTesting();
        RankWatchdog.Loss loss = ranks.get(0).watchdog().awaitLoss(Duration.ofSeconds(10));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertNotNull(loss);
        assertEquals(1, loss.rank());
        assertTrue(loss.reason().contains("nothing arrived from it for 800 ms"), loss.reason());
        assertTrue(millis >= 500 && millis < 5000, "took " + millis + " ms with an 800 ms timeout");
        // Rank 0 hangs up on it, so the silent rank learns that it is on its own.
        RankWatchdog.Loss back = ranks.get(1).watchdog().awaitLoss(Duration.ofSeconds(5));
        assertNotNull(back);
        assertEquals(0, back.rank());
    }

    @Test
    void ranksThatCloseNormallyAreNotLost() throws Exception {
        List<Rank> ranks = world(3, Duration.ofMillis(500));
        Thread.sleep(1200);  // several heartbeat periods: everyone is alive and says so
        for (Rank r : ranks) {
            assertNull(r.watchdog().loss());
        }
        for (Rank r : ranks) {
            r.watchdog().close();
            Thread.sleep(200);  // the others see the goodbye, then the connection end
        }
        for (Rank r : ranks) {
            r.watchdog().close();  // idempotent
            assertEquals(List.of(), r.losses(), "a normal close was taken for a loss");
        }
        assertEquals(List.of(), LiveThreads.named("iris-watchdog"));
    }

    /** Rank 0's watchdog starting (its losses collected) and rank 1 played by hand: its rendezvous and the watchdog's port and nonce. */
    private record RankOneByHand(List<RankWatchdog.Loss> losses, Future<RankWatchdog> zero, Rendezvous one, int watchdogPort,
                                 byte[] nonce) {
        /** Says rank 1's hello on {@code real} and meets rank 0, whose watchdog has then started. */
        RankWatchdog join(Socket real) throws Exception {
            real.getOutputStream().write(hello(1, nonce));
            one.barrier();  // rank 0 finishes its start once every rank is connected
            return zero.get(10, TimeUnit.SECONDS);
        }
    }

    /** Starts rank 0's watchdog in the pool and connects rank 1's rendezvous; rank 1's watchdog connection is the test's to make. */
    private RankOneByHand rankOneByHand() throws Exception {
        List<RankWatchdog.Loss> losses = new CopyOnWriteArrayList<>();
        Rendezvous.Listener listener = Rendezvous.listen(config(0, 2, 0, LONG));
        toClose.add(listener);
        int port = listener.boundPort();
        Future<RankWatchdog> zero = pool.submit(() -> {
            Rendezvous rdv = listener.awaitMembers();
            toClose.add(rdv);
            return RankWatchdog.start(rdv, config(0, 2, port, LONG), LONG, losses::add);
        });
        Rendezvous one = Rendezvous.connect(config(1, 2, port, LONG));
        toClose.add(one);
        ByteBuffer where = ByteBuffer.wrap(one.broadcast(null, 0));
        int watchdogPort = where.getInt();
        byte[] nonce = new byte[RankWatchdog.NONCE_BYTES];
        where.get(nonce);
        return new RankOneByHand(losses, zero, one, watchdogPort, nonce);
    }

    /**
     * Rank 1 played by hand: the port and nonce come through the rendezvous; rank 0 listens only on
     * the configured address, drops connections without the nonce or with a bad rank, sends
     * heartbeats, and takes anything but the watchdog's messages for a lost rank.
     */
    @Test
    void strangersAreDroppedAndGarbageCountsAsLoss() throws Exception {
        RankOneByHand rank1 = rankOneByHand();
        int watchdogPort = rank1.watchdogPort();
        byte[] nonce = rank1.nonce();

        try (Socket other = new Socket()) {
            assertThrows(ConnectException.class, () -> other.connect(new InetSocketAddress("127.0.0.2", watchdogPort), 2000),
                    "the watchdog listens on the rendezvous address only");
        }
        byte[] wrongNonce = nonce.clone();
        wrongNonce[3] ^= 1;
        assertDropped(watchdogPort, hello(1, wrongNonce));
        assertDropped(watchdogPort, hello(7, nonce));
        assertDropped(watchdogPort, ByteBuffer.allocate(RankWatchdog.HELLO_BYTES).putInt(0x47455420).array());

        Socket real = new Socket(HOST, watchdogPort);
        toClose.add(real);
        real.setSoTimeout(5000);
        RankWatchdog watchdog = rank1.join(real);
        toClose.add(watchdog);
        assertTrue(watchdog.boundPort() == watchdogPort);

        byte[] message = real.getInputStream().readNBytes(RankWatchdog.MESSAGE_BYTES);
        assertEquals(RankWatchdog.HEARTBEAT, message[0], "rank 0 sends heartbeats");
        assertNull(watchdog.loss());

        real.getOutputStream().write(new byte[] {9, 0, 0, 0, 0, 0, 0, 1});
        RankWatchdog.Loss loss = watchdog.awaitLoss(Duration.ofSeconds(5));
        assertNotNull(loss);
        assertEquals(1, loss.rank());
        assertTrue(loss.reason().contains("something other than the watchdog's messages"), loss.reason());
        awaitListenerCalls(new Rank(null, watchdog, rank1.losses()), 1);
        assertEquals(List.of(loss), rank1.losses());
    }

    /** Silent connections beyond MAX_STRANGERS push out the oldest; the real rank still joins. */
    @Test
    void aFloodOfSilentConnectionsCannotKeepARankOut() throws Exception {
        RankOneByHand rank1 = rankOneByHand();
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 3 * RankWatchdog.MAX_STRANGERS; i++) {
                Socket s = new Socket(HOST, rank1.watchdogPort());
                s.setSoTimeout(5000);
                silent.add(s);
            }
            assertEquals(-1, silent.get(0).getInputStream().read(), "the oldest silent connection was dropped");
            Socket real = new Socket(HOST, rank1.watchdogPort());
            toClose.add(real);
            RankWatchdog watchdog = rank1.join(real);
            toClose.add(watchdog);
            assertNull(watchdog.loss());
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
    }

    @Test
    void aGoodbyeBeforeTheConnectionEndsIsNoLoss() throws Exception {
        RankOneByHand rank1 = rankOneByHand();
        RankWatchdog watchdog;
        try (Socket real = new Socket(HOST, rank1.watchdogPort())) {
            watchdog = rank1.join(real);
            toClose.add(watchdog);
            real.getOutputStream().write(new byte[] {RankWatchdog.BYE, 0, 0, 0, 0, 0, 0, 1});
        }
        assertNull(watchdog.awaitLoss(Duration.ofMillis(800)), "a rank that said goodbye was taken for lost");
        assertEquals(List.of(), rank1.losses());
    }

    @Test
    void aWorldOfOneNeedsNoConnectionAndNoThread() throws Exception {
        Rendezvous rdv = Rendezvous.connect(config(0, 1, 0, LONG));
        toClose.add(rdv);
        try (RankWatchdog watchdog = RankWatchdog.start(rdv, config(0, 1, 0, LONG), LONG, loss -> { })) {
            assertNull(watchdog.loss());
            assertEquals(List.of(), LiveThreads.named("iris-watchdog"));
        }
    }

    @Test
    void theTimeoutMustBePositive() throws Exception {
        Rendezvous rdv = Rendezvous.connect(config(0, 1, 0, LONG));
        toClose.add(rdv);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RankWatchdog.start(rdv, config(0, 1, 0, LONG), Duration.ZERO, loss -> { }));
        assertTrue(e.getMessage().contains("rank 0: watchdog timeout must be a positive duration, got PT0S"), e.getMessage());
    }

    // ---- harness -----------------------------------------------------------------------------

    /** Every rank of a world as a thread: rendezvous, then the (collective) watchdog start. */
    private List<Rank> world(int n, Duration timeout) throws Exception {
        Rendezvous.Listener listener = Rendezvous.listen(config(0, n, 0, LONG));
        toClose.add(listener);
        int port = listener.boundPort();
        List<Future<Rank>> futures = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            futures.add(pool.submit(() -> {
                Rendezvous rdv = rank == 0 ? listener.awaitMembers() : Rendezvous.connect(config(rank, n, port, LONG));
                List<RankWatchdog.Loss> losses = new CopyOnWriteArrayList<>();
                RankWatchdog watchdog = RankWatchdog.start(rdv, config(rank, n, port, LONG), timeout, losses::add);
                return new Rank(rdv, watchdog, losses);
            }));
        }
        List<Rank> ranks = new ArrayList<>();
        for (Future<Rank> f : futures) {
            Rank r = f.get(15, TimeUnit.SECONDS);
            toClose.add(r.rendezvous());
            toClose.add(r.watchdog());
            ranks.add(r);
        }
        return ranks;
    }

    private static RendezvousConfig config(int rank, int world, int port, Duration timeout) {
        return new RendezvousConfig(rank, world, HOST, port, TOKEN, timeout, 1 << 20);
    }

    private static byte[] hello(int rank, byte[] nonce) {
        return ByteBuffer.allocate(RankWatchdog.HELLO_BYTES).putInt(RankWatchdog.HELLO_MAGIC).putInt(rank).put(nonce).array();
    }

    /** Rank 0 closes a connection whose hello it does not accept. */
    private static void assertDropped(int port, byte[] hello) throws IOException {
        try (Socket s = new Socket(HOST, port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(hello);
            InputStream in = s.getInputStream();
            assertEquals(-1, in.read(), "rank 0 kept a connection it should have dropped");
        }
    }

    private static void awaitListenerCalls(Rank rank, int calls) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (rank.losses().size() < calls && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(calls, rank.losses().size(), "listener calls: " + rank.losses());
    }
}

package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.IrisTimeoutException;
import dev.irisjvm.core.testing.LiveThreads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ranks run as threads of this JVM and meet over loopback. */
@Timeout(20)
class RendezvousTest {
    private static final String HOST = "127.0.0.1";
    private static final String TOKEN = "job-42";
    private static final Duration LONG = Duration.ofSeconds(10);
    private static final int MAX_FRAME = 8 << 20;
    private static final String THREAD_PREFIX = "rdv-test-rank-";

    private final AtomicInteger threadCount = new AtomicInteger();
    private final ExecutorService pool = Executors.newCachedThreadPool(
            r -> new Thread(r, THREAD_PREFIX + threadCount.incrementAndGet()));

    @AfterEach
    void stopRankThreads() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "a rank thread is still running");
    }

    // ---- collectives -------------------------------------------------------------------

    @Test
    void worldOfOneWorksWithoutAnySocket() {
        // An unresolvable host proves nothing is bound, resolved or connected.
        var config = new RendezvousConfig(0, 1, "no-such-host.invalid", 0, TOKEN, Duration.ofSeconds(1), 1024);
        try (Rendezvous rdv = Rendezvous.connect(config)) {
            assertEquals(0, rdv.rank());
            assertEquals(1, rdv.worldSize());
            assertEquals(0, rdv.boundPort());
            byte[] mine = {1, 2};
            byte[][] all = rdv.allGather(mine);
            assertEquals(1, all.length);
            assertArrayEquals(mine, all[0]);
            assertArrayEquals(new byte[] {7}, rdv.broadcast(new byte[] {7}, 0));
            rdv.barrier();
            assertContains(assertThrows(IllegalArgumentException.class, () -> rdv.broadcast(new byte[1], 1)),
                    "broadcast root must be in [0, 0], got 1");
        }
    }

    @Test
    void allGatherCarriesUnequalEmptyAndLargeContributions() throws Exception {
        List<Outcome<byte[][]>> outcomes = runWorld(rootConfig(4, LONG, MAX_FRAME),
                rdv -> rdv.allGather(contribution(rdv.rank())));
        for (Outcome<byte[][]> outcome : outcomes) {
            byte[][] all = outcome.value();
            assertEquals(4, all.length);
            for (int r = 0; r < 4; r++) {
                assertArrayEquals(contribution(r), all[r], "rank " + r + "'s contribution");
            }
        }
        assertEquals(1 << 20, outcomes.get(0).value()[3].length);
        assertEquals(0, outcomes.get(2).value()[1].length);
    }

    @Test
    void broadcastFromRankZeroAndFromRankTwo() throws Exception {
        List<Outcome<List<byte[]>>> outcomes = runWorld(rootConfig(4, LONG, MAX_FRAME), rdv -> {
            byte[] fromZero = rdv.broadcast(rdv.rank() == 0 ? bytes("plan") : null, 0);
            byte[] fromTwo = rdv.broadcast(rdv.rank() == 2 ? bytes("handle-2") : bytes("ignored"), 2);
            byte[] empty = rdv.broadcast(rdv.rank() == 3 ? new byte[0] : null, 3);
            return List.of(fromZero, fromTwo, empty);
        });
        for (Outcome<List<byte[]>> outcome : outcomes) {
            assertArrayEquals(bytes("plan"), outcome.value().get(0));
            assertArrayEquals(bytes("handle-2"), outcome.value().get(1));
            assertArrayEquals(new byte[0], outcome.value().get(2));
        }
    }

    @Test
    void noRankLeavesABarrierBeforeAllHaveArrived() throws Exception {
        int world = 4;
        int rounds = 5;
        AtomicInteger arrived = new AtomicInteger();
        List<Outcome<List<Integer>>> outcomes = runWorld(rootConfig(world, LONG, MAX_FRAME), rdv -> {
            List<Integer> seenAfter = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                Thread.sleep(((rdv.rank() + round) % world) * 15L); // a different latecomer each round
                arrived.incrementAndGet();
                rdv.barrier();
                seenAfter.add(arrived.get());
            }
            return seenAfter;
        });
        for (Outcome<List<Integer>> outcome : outcomes) {
            for (int round = 0; round < rounds; round++) {
                int seen = outcome.value().get(round);
                assertTrue(seen >= world * (round + 1),
                        "a rank left barrier " + round + " having seen only " + seen + " arrivals");
            }
        }
    }

    @Test
    void rankZeroMayStartAfterTheOthers() throws Exception {
        int port = freePort();
        var root = new RendezvousConfig(0, 3, HOST, port, TOKEN, LONG, MAX_FRAME);
        List<Future<byte[][]>> members = new ArrayList<>();
        for (int r = 1; r < 3; r++) {
            RendezvousConfig config = root.withRank(r);
            members.add(pool.submit(() -> {
                try (Rendezvous rdv = Rendezvous.connect(config)) {
                    return rdv.allGather(new byte[] {(byte) rdv.rank()});
                }
            }));
        }
        Thread.sleep(300); // the members are retrying "connection refused" meanwhile
        try (Rendezvous rdv = Rendezvous.connect(root)) {
            assertEquals(port, rdv.boundPort());
            assertArrayEquals(new byte[][] {{0}, {1}, {2}}, rdv.allGather(new byte[] {0}));
        }
        for (Future<byte[][]> member : members) {
            assertArrayEquals(new byte[][] {{0}, {1}, {2}}, member.get(10, TimeUnit.SECONDS));
        }
    }

    // ---- join handshake ----------------------------------------------------------------

    @Test
    void badJoinsAreRejectedWithTheReasonWhileRankZeroKeepsWaiting() throws Exception {
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(2, LONG, MAX_FRAME))) {
            int port = listener.boundPort();
            Future<Rendezvous> root = pool.submit(listener::awaitMembers);

            RendezvousException wrongSecret = assertThrows(RendezvousException.class, () -> Rendezvous.connect(
                    new RendezvousConfig(1, 2, HOST, port, "other-job", LONG, MAX_FRAME)));
            assertContains(wrongSecret, "rank 0 at 127.0.0.1:" + port + " reported: " + PendingJoin.AUTHENTICATION_FAILED);
            assertContains(wrongSecret, "IRIS_JOB_TOKEN or IRIS_JOB_TOKEN_FILE");
            assertFalse(wrongSecret.getMessage().contains(TOKEN), "the job's secret must not be disclosed");
            assertFalse(wrongSecret.getMessage().contains("sha256"), "nor anything derived from it");
            assertContains(assertThrows(RendezvousException.class, () -> Rendezvous.connect(
                            new RendezvousConfig(1, 3, HOST, port, TOKEN, LONG, MAX_FRAME))),
                    "rank 1 says world size 3, rank 0 has 2");
            // An empty secret is a secret too: it must match rank 0's, which is not empty here.
            assertContains(refusal(port, "", 1, 2), PendingJoin.AUTHENTICATION_FAILED);
            // Claims are checked after authentication only: strangers learn nothing about the job.
            assertContains(refusal(port, "guess", 5, 2), PendingJoin.AUTHENTICATION_FAILED);
            assertContains(refusal(port, TOKEN, 5, 2), "rank 5 is out of range");
            assertContains(refusal(port, TOKEN, 0, 2), "claims rank 0");
            try (HandPlayedRank oldRank = handPlayed(port, TOKEN)) {
                assertContains(failureOf(oldRank.handshake(1, 2, 99)),
                        "rank 1 speaks rendezvous protocol version 99, rank 0 speaks 2");
            }
            try (HandPlayedRank stranger = handPlayed(port, TOKEN)) {
                stranger.send(new Frame.Join(0xCAFEBABE, FrameCodec.PROTOCOL_VERSION, 1, 2, new byte[Handshake.NONCE_BYTES]));
                assertContains(failureOf(stranger.receive()), "is not an Iris rendezvous client");
            }
            try (HandPlayedRank stranger = handPlayed(port, TOKEN)) {
                stranger.send(new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, 1, 2, new byte[3]));
                assertContains(failureOf(stranger.receive()), "malformed join frame: nonce of 3 bytes, expected 32");
            }
            // Another protocol altogether, and a stranger announcing a huge join frame.
            assertContains(rawSend(port, bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), "unknown frame type 0x2f");
            byte[] hugeJoin = ByteBuffer.allocate(5).putInt(1 << 30).put(FrameCodec.JOIN).array();
            assertContains(rawSend(port, hugeJoin), "join frame of 1073741824 bytes exceeds the limit of 1024");

            assertFalse(root.isDone(), "rank 0 must keep waiting for the real rank 1");
            try (Rendezvous one = Rendezvous.connect(memberConfig(1, 2, port, LONG));
                 Rendezvous zero = root.get(10, TimeUnit.SECONDS)) {
                Future<byte[]> b = pool.submit(() -> zero.broadcast(bytes("ok"), 0));
                assertArrayEquals(bytes("ok"), one.broadcast(null, 0));
                assertArrayEquals(bytes("ok"), b.get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aDuplicateRankIsRejected() throws Exception {
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(3, LONG, MAX_FRAME))) {
            int port = listener.boundPort();
            Future<Rendezvous> root = pool.submit(listener::awaitMembers);
            CompletionService<Rendezvous> ones = new ExecutorCompletionService<>(pool);
            ones.submit(() -> Rendezvous.connect(memberConfig(1, 3, port, LONG)));
            ones.submit(() -> Rendezvous.connect(memberConfig(1, 3, port, LONG)));

            // Rank 2 is not there yet, so the only way either can finish is by being rejected.
            Future<Rendezvous> first = ones.poll(10, TimeUnit.SECONDS);
            assertNotNull(first, "neither rank 1 was rejected");
            ExecutionException rejected = assertThrows(ExecutionException.class, first::get);
            assertInstanceOf(RendezvousException.class, rejected.getCause());
            assertContains(rejected.getCause(), "duplicate rank 1");

            try (Rendezvous two = Rendezvous.connect(memberConfig(2, 3, port, LONG));
                 Rendezvous one = ones.poll(10, TimeUnit.SECONDS).get();
                 Rendezvous zero = root.get(10, TimeUnit.SECONDS)) {
                assertEquals(1, one.rank());
                assertEquals(2, two.rank());
                assertEquals(0, zero.rank());
            }
        }
    }

    // ---- timeouts ----------------------------------------------------------------------

    @Test
    void aRankThatNeverJoinsTimesEveryoneOutNamingIt() throws Exception {
        Duration timeout = Duration.ofMillis(1500);
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(3, timeout, MAX_FRAME))) {
            int port = listener.boundPort();
            long start = System.nanoTime();
            Future<Rendezvous> root = pool.submit(listener::awaitMembers);
            Future<Rendezvous> one = pool.submit(() -> Rendezvous.connect(memberConfig(1, 3, port, timeout)));

            String expected = "rendezvous at 127.0.0.1:" + port + " timed out after 1500 ms: ranks [2] never joined";
            assertContains(causeOf(root, IrisTimeoutException.class), expected);
            assertContains(causeOf(one, IrisTimeoutException.class), expected);
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(elapsedMs >= 1400 && elapsedMs < 6000, "took " + elapsedMs + " ms");
        }
    }

    @Test
    void aMemberWaitingForTheJoinTimesOutNamingTheStep() {
        // Rank 0 is bound but never serves: the connection succeeds, the welcome never comes.
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(2, LONG, MAX_FRAME))) {
            IrisTimeoutException e = assertThrows(IrisTimeoutException.class, () -> Rendezvous.connect(
                    memberConfig(1, 2, listener.boundPort(), Duration.ofMillis(500))));
            assertContains(e, "rank 1 timed out after 500 ms waiting for rank 0 at 127.0.0.1:"
                    + listener.boundPort() + " to confirm the join (step 0, join)");
        }
    }

    @Test
    void aRankMissingFromAStepTimesOutTheOthersNamingRankAndStep() throws Exception {
        CountDownLatch othersFailed = new CountDownLatch(2);
        List<Outcome<Void>> outcomes = runWorld(rootConfig(3, Duration.ofMillis(1000), MAX_FRAME), rdv -> {
            if (rdv.rank() == 2) {
                othersFailed.await(); // late for step 1, on purpose
            }
            try {
                rdv.barrier();
            } finally {
                othersFailed.countDown();
            }
            return null;
        });
        String expected = "timed out after 1000 ms at step 1 (barrier): ranks [2] did not arrive";
        assertContains(outcomes.get(0).error(IrisTimeoutException.class), expected);
        assertContains(outcomes.get(1).error(IrisTimeoutException.class), expected);
        // The latecomer finds rank 0's verdict waiting instead of timing out itself.
        assertContains(outcomes.get(2).error(IrisTimeoutException.class), expected);
    }

    @Test
    void aMemberWhoseStepRankZeroNeverServesTimesOutNamingTheStep() throws Exception {
        CountDownLatch memberDone = new CountDownLatch(1);
        List<Outcome<Void>> outcomes = runWorld(rootConfig(2, Duration.ofMillis(700), MAX_FRAME), rdv -> {
            if (rdv.rank() == 0) {
                memberDone.await(); // alive, connected, but not taking part
                return null;
            }
            try {
                rdv.barrier();
                return null;
            } finally {
                memberDone.countDown();
            }
        });
        assertNull(outcomes.get(0).error());
        assertContains(outcomes.get(1).error(IrisTimeoutException.class),
                "rank 1 timed out after 700 ms waiting for rank 0 at 127.0.0.1:");
        assertContains(outcomes.get(1).error(), "to complete step 1 (barrier)");
    }

    // ---- failures ----------------------------------------------------------------------

    @Test
    void differentCollectivesAtTheSameStepAreReportedNotMixed() throws Exception {
        List<Outcome<Void>> outcomes = runWorld(rootConfig(3, LONG, MAX_FRAME), rdv -> {
            rdv.barrier(); // step 1 agrees
            if (rdv.rank() == 1) {
                rdv.allGather(new byte[] {1});
            } else {
                rdv.barrier();
            }
            return null;
        });
        for (Outcome<Void> outcome : outcomes) {
            assertContains(outcome.error(RendezvousException.class),
                    "rank 1 is at step 2 (allGather), rank 0 at step 2 (barrier)");
        }
    }

    @Test
    void broadcastRootsMustAgreeAndAFailedRendezvousStaysFailed() throws Exception {
        List<Outcome<Void>> outcomes = runWorld(rootConfig(2, LONG, MAX_FRAME), rdv -> {
            try {
                rdv.broadcast(new byte[] {1}, rdv.rank());
            } catch (RendezvousException first) {
                assertContains(assertThrows(RendezvousException.class, rdv::barrier), "failed earlier");
                throw first;
            }
            return null;
        });
        assertContains(outcomes.get(0).error(RendezvousException.class),
                "rank 1 is at step 1 (broadcast from rank 1), rank 0 at step 1 (broadcast from rank 0)");
        assertContains(outcomes.get(1).error(RendezvousException.class), "rank 1 is at step 1 (broadcast from rank 1)");
    }

    @Test
    void aDroppedMemberMakesEveryoneFailFastNamingIt() throws Exception {
        long start = System.nanoTime();
        List<Outcome<Void>> outcomes = runWorld(rootConfig(3, LONG, MAX_FRAME), rdv -> {
            if (rdv.rank() == 2) {
                rdv.close(); // as if the process died right after joining
                return null;
            }
            rdv.barrier();
            return null;
        });
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertContains(outcomes.get(0).error(RendezvousException.class),
                "rank 2 dropped out of the rendezvous at step 1 (barrier)");
        assertContains(outcomes.get(1).error(RendezvousException.class), "rank 2 dropped out");
        assertTrue(elapsedMs < LONG.toMillis() / 2, "took " + elapsedMs + " ms; the 10 s timeout should not matter");
    }

    @Test
    void framesOverTheLimitAreRefusedWithSizeAndLimit() throws Exception {
        // A contribution that cannot fit: refused by the rank that made it; rank 0 sees it leave.
        List<Outcome<byte[][]>> tooBig = runWorld(rootConfig(2, LONG, 4096),
                rdv -> rdv.allGather(new byte[rdv.rank() == 1 ? 10_000 : 10]));
        assertContains(tooBig.get(1).error(RendezvousException.class), "needs a frame of 10017 bytes, over the limit of 4096");
        assertContains(tooBig.get(0).error(RendezvousException.class), "rank 1 dropped out");

        // Each contribution fits, the gathered result does not: rank 0 says so to everyone.
        List<Outcome<byte[][]>> sumTooBig = runWorld(rootConfig(3, LONG, 4096), rdv -> rdv.allGather(new byte[2000]));
        for (Outcome<byte[][]> outcome : sumTooBig) {
            assertContains(outcome.error(RendezvousException.class), "rank 0 cannot answer step 1 (allGather)");
            assertContains(outcome.error(), "6025 bytes, over the limit of 4096");
        }
    }

    // ---- late ranks, strangers and broken frames --------------------------------------

    @Test
    void ranksLateWithinTheDeadlineAreWaitedFor() throws Exception {
        // Rank 2 joins 800 ms late and rank 1 comes 800 ms late to step 1; the 3 s deadline covers both.
        Duration timeout = Duration.ofSeconds(3);
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(3, timeout, MAX_FRAME))) {
            int port = listener.boundPort();
            Future<byte[][]> zero = pool.submit(() -> {
                try (Rendezvous rdv = listener.awaitMembers()) {
                    return rdv.allGather(new byte[] {0});
                }
            });
            Future<byte[][]> one = pool.submit(() -> {
                try (Rendezvous rdv = Rendezvous.connect(memberConfig(1, 3, port, timeout))) {
                    Thread.sleep(800);
                    return rdv.allGather(new byte[] {1});
                }
            });
            Thread.sleep(800);
            try (Rendezvous two = Rendezvous.connect(memberConfig(2, 3, port, timeout))) {
                assertArrayEquals(new byte[][] {{0}, {1}, {2}}, two.allGather(new byte[] {2}));
            }
            assertArrayEquals(new byte[][] {{0}, {1}, {2}}, zero.get(10, TimeUnit.SECONDS));
            assertArrayEquals(new byte[][] {{0}, {1}, {2}}, one.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void silentAndTruncatedStrangersDoNotKeepTheRealRanksOut() throws Exception {
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(2, LONG, MAX_FRAME))) {
            int port = listener.boundPort();
            Future<Rendezvous> root = pool.submit(listener::awaitMembers);
            try (Socket silent = new Socket(HOST, port)) {
                // Half a header, then gone; half a join body, then gone.
                try (Socket s = new Socket(HOST, port)) {
                    s.getOutputStream().write(new byte[] {0, 0});
                }
                ByteBuffer join = FrameCodec.encode(new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, 1, 2,
                        new byte[Handshake.NONCE_BYTES]), MAX_FRAME);
                try (Socket s = new Socket(HOST, port)) {
                    s.getOutputStream().write(join.array(), 0, join.limit() - 3);
                }
                assertFalse(root.isDone(), "rank 0 must keep waiting for the real rank 1");
                try (Rendezvous one = Rendezvous.connect(memberConfig(1, 2, port, LONG));
                     Rendezvous zero = root.get(10, TimeUnit.SECONDS)) {
                    Future<byte[]> b = pool.submit(() -> zero.broadcast(bytes("in"), 0));
                    assertArrayEquals(bytes("in"), one.broadcast(null, 0));
                    assertArrayEquals(bytes("in"), b.get(10, TimeUnit.SECONDS));
                }
                assertTrue(silent.isConnected());
            }
        }
    }

    @Test
    void aMemberWhoseFrameIsCutOffMidwayMakesEveryoneFailNamingIt() throws Exception {
        // Rank 2 is played by hand: it joins properly, then sends half of its request for step 1 and dies.
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(3, LONG, MAX_FRAME))) {
            int port = listener.boundPort();
            Future<Rendezvous> root = pool.submit(listener::awaitMembers);
            Future<Rendezvous> oneJoin = pool.submit(() -> Rendezvous.connect(memberConfig(1, 3, port, LONG)));
            try (HandPlayedRank hand = handPlayed(port, TOKEN)) {
                Socket two = hand.socket();
                assertInstanceOf(Frame.Accept.class, hand.handshake(2, 3, FrameCodec.PROTOCOL_VERSION));
                assertInstanceOf(Frame.Welcome.class, hand.receive());
                try (Rendezvous zero = root.get(10, TimeUnit.SECONDS); Rendezvous one = oneJoin.get(10, TimeUnit.SECONDS)) {
                    Future<Void> z = pool.submit(() -> {
                        zero.barrier();
                        return null;
                    });
                    Future<Void> o = pool.submit(() -> {
                        one.barrier();
                        return null;
                    });
                    ByteBuffer request = FrameCodec.encode(new Frame.Request(1, Collective.BARRIER, 0, new byte[0]), MAX_FRAME);
                    two.getOutputStream().write(request.array(), 0, request.limit() - 4);
                    two.close();
                    assertContains(causeOf(z, RendezvousException.class), "rank 2 dropped out of the rendezvous at step 1"
                            + " (barrier): truncated request frame: connection closed after");
                    assertContains(causeOf(o, RendezvousException.class), "rank 2 dropped out");
                }
            }
        }
    }

    // ---- lifecycle ---------------------------------------------------------------------

    @Test
    void closeIsIdempotentAndReleasesPortsAndThreads() throws Exception {
        Rendezvous.Listener listener = Rendezvous.listen(rootConfig(2, LONG, MAX_FRAME));
        int idlePort = listener.boundPort();
        listener.close();
        listener.close();
        assertThrows(IllegalStateException.class, listener::awaitMembers);
        assertPortIsFree(idlePort);

        AtomicInteger port = new AtomicInteger();
        List<Outcome<Void>> outcomes = runWorld(rootConfig(3, LONG, MAX_FRAME), rdv -> {
            port.set(rdv.boundPort());
            rdv.barrier();
            rdv.close();
            rdv.close();
            assertContains(assertThrows(RendezvousException.class, rdv::barrier), "the rendezvous is closed");
            return null;
        });
        outcomes.forEach(Outcome::value);
        assertPortIsFree(port.get());

        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(List.of(), LiveThreads.named(THREAD_PREFIX), "rank threads still alive");
        // The library starts no threads of its own; make sure that stays true.
        assertEquals(List.of(), LiveThreads.named("iris"), "library threads still alive");
    }

    @Test
    void aPortAlreadyInUseIsReportedWithTheAddress() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket()) {
            taken.bind(new java.net.InetSocketAddress(HOST, 0));
            int port = taken.getLocalPort();
            RendezvousException e = assertThrows(RendezvousException.class,
                    () -> Rendezvous.listen(new RendezvousConfig(0, 2, HOST, port, TOKEN, LONG, MAX_FRAME)));
            assertContains(e, "rank 0 cannot listen on");
            assertContains(e, String.valueOf(port));
        }
    }

    @Test
    void rankZeroListensOnlyOnTheConfiguredAddress() throws Exception {
        try (Rendezvous.Listener listener = Rendezvous.listen(rootConfig(2, LONG, MAX_FRAME))) {
            int port = listener.boundPort();
            // 127.0.0.2 is this host too (loopback is 127/8), but nothing listens there.
            try (java.net.Socket other = new java.net.Socket()) {
                assertThrows(java.net.ConnectException.class,
                        () -> other.connect(new java.net.InetSocketAddress("127.0.0.2", port), 2000));
            }
            try (java.net.Socket configured = new java.net.Socket()) {
                configured.connect(new java.net.InetSocketAddress(HOST, port), 2000);
                assertTrue(configured.isConnected());
            }
        }
    }

    @Test
    void closeFromAnotherThreadAbortsAWaitingCall() throws Exception {
        CountDownLatch memberAborted = new CountDownLatch(1);
        List<Outcome<Void>> outcomes = runWorld(rootConfig(2, LONG, MAX_FRAME), rdv -> {
            if (rdv.rank() == 0) {
                memberAborted.await();
                rdv.barrier(); // rank 1's request for step 1 got out before it closed, so this completes
                rdv.barrier(); // but rank 1 is gone now
                return null;
            }
            pool.submit(() -> {
                Thread.sleep(200);
                rdv.close();
                return null;
            });
            long start = System.nanoTime();
            try {
                rdv.barrier();
            } finally {
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "close did not abort the wait");
                memberAborted.countDown();
            }
            return null;
        });
        assertContains(outcomes.get(1).error(RendezvousException.class),
                "rank 1: the rendezvous was closed during step 1 (barrier)");
        assertContains(outcomes.get(0).error(RendezvousException.class),
                "rank 1 dropped out of the rendezvous at step 2 (barrier)");
    }

    @Test
    void configRejectsBadArgumentsNamingThemAndTheRange() {
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 0, HOST, 1, TOKEN)), "worldSize must be >= 1, got 0");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(2, 2, HOST, 1, TOKEN)), "rank must be in [0, 1] for worldSize 2, got 2");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(-1, 2, HOST, 1, TOKEN)), "got -1");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, " ", 1, TOKEN)), "host must be");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, HOST, 65536, TOKEN)), "port must be in [0, 65535], got 65536");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(1, 2, HOST, 0, TOKEN)), "port must be in [1, 65535] for rank 1, got 0");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, HOST, 1, null)), "jobToken must not be null");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, HOST, 1, TOKEN, Duration.ZERO, 1024)),
                "timeout must be a positive duration, got PT0S");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, HOST, 1, TOKEN, LONG, 0)), "maxFrameBytes must be > 0, got 0");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> new RendezvousConfig(0, 2, HOST, 1, TOKEN, LONG, 10)), "maxFrameBytes must be >= 52 to carry the join handshake, got 10");
        assertContains(assertThrows(IllegalArgumentException.class,
                () -> Rendezvous.listen(new RendezvousConfig(1, 2, HOST, 1, TOKEN))), "listen is for rank 0");
    }

    // ---- harness -----------------------------------------------------------------------

    @FunctionalInterface
    interface RankBody<T> {
        T run(Rendezvous rdv) throws Exception;
    }

    /** What one rank's body returned, or what it threw. */
    record Outcome<T>(int rank, T result, Throwable error) {
        T value() {
            if (error != null) {
                throw new AssertionError("rank " + rank + " failed: " + error, error);
            }
            return result;
        }

        <E extends Throwable> E error(Class<E> type) {
            assertNotNull(error, "rank " + rank + " should have failed");
            return assertInstanceOf(type, error, () -> "rank " + rank + " failed with " + error);
        }
    }

    /**
     * Runs every rank of a world as a thread: rank 0 on an ephemeral port, the others joining it.
     * Each rank runs {@code body} on its rendezvous and closes it; outcomes come back in rank order.
     */
    private <T> List<Outcome<T>> runWorld(RendezvousConfig root, RankBody<T> body) throws Exception {
        try (Rendezvous.Listener listener = Rendezvous.listen(root)) {
            int port = listener.boundPort();
            List<Future<Outcome<T>>> futures = new ArrayList<>();
            futures.add(pool.submit(() -> outcome(0, listener::awaitMembers, body)));
            for (int r = 1; r < root.worldSize(); r++) {
                RendezvousConfig member = root.withPort(port).withRank(r);
                int rank = r;
                futures.add(pool.submit(() -> outcome(rank, () -> Rendezvous.connect(member), body)));
            }
            List<Outcome<T>> outcomes = new ArrayList<>();
            for (Future<Outcome<T>> future : futures) {
                outcomes.add(future.get(15, TimeUnit.SECONDS));
            }
            return outcomes;
        }
    }

    private static <T> Outcome<T> outcome(int rank, Callable<Rendezvous> join, RankBody<T> body) {
        try (Rendezvous rdv = join.call()) {
            return new Outcome<>(rank, body.run(rdv), null);
        } catch (Throwable t) {
            return new Outcome<>(rank, null, t);
        }
    }

    private static RendezvousConfig rootConfig(int world, Duration timeout, int maxFrameBytes) {
        return new RendezvousConfig(0, world, HOST, 0, TOKEN, timeout, maxFrameBytes);
    }

    private static RendezvousConfig memberConfig(int rank, int world, int port, Duration timeout) {
        return new RendezvousConfig(rank, world, HOST, port, TOKEN, timeout, MAX_FRAME);
    }

    private static byte[] contribution(int rank) {
        int size = switch (rank) {
            case 0 -> 3;
            case 1 -> 0;
            case 2 -> 1000;
            default -> 1 << 20;
        };
        byte[] out = new byte[size];
        for (int i = 0; i < size; i++) {
            out[i] = (byte) (i * 31 + rank);
        }
        return out;
    }

    /** A rank played by hand; callers close it, or leave it to rank 0, which closes it after its verdict. */
    private static HandPlayedRank handPlayed(int port, String secret) throws IOException {
        return new HandPlayedRank(HOST, port, secret, 5000);
    }

    /** Rank 0's failure notice to a hand-played handshake. */
    private static String refusal(int port, String secret, int rank, int world) throws IOException {
        try (HandPlayedRank hand = handPlayed(port, secret)) {
            return hand.refusal(rank, world);
        }
    }

    private static String failureOf(Frame frame) {
        return assertInstanceOf(Frame.Failure.class, frame).message();
    }

    /** Sends raw bytes as a would-be rank and returns the message of rank 0's failure notice. */
    private static String rawSend(int port, byte[] bytes) throws IOException {
        try (Socket socket = new Socket(HOST, port)) {
            socket.setSoTimeout(5000);
            socket.getOutputStream().write(bytes);
            ReadableByteChannel in = Channels.newChannel(socket.getInputStream());
            Frame reply = new FrameReader(MAX_FRAME).read(in);
            return assertInstanceOf(Frame.Failure.class, reply).message();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        }
    }

    private static void assertPortIsFree(int port) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(HOST, port));
        }
    }

    private static <T> Throwable causeOf(Future<T> future, Class<? extends Throwable> type) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(type, e.getCause());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void assertContains(Throwable e, String part) {
        assertContains(e.getMessage(), part);
    }

    private static void assertContains(String message, String part) {
        assertTrue(message != null && message.contains(part),
                () -> "expected a message containing \"" + part + "\", got: " + message);
    }
}

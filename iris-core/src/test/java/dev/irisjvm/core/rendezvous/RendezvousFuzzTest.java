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
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Malformed input thrown at rank 0 over loopback: random bytes, truncated frames, wrong
 * lengths and versions, valid frames in the wrong order, and handshakes that go wrong in every
 * way. Rank 0 must answer or close each within its handshake deadline, keep waiting for the
 * real ranks, and let them join afterwards. Input {@code i} depends only on the seed and
 * {@code i}; rerun one with {@code -Diris.fuzz.seed=N}.
 */
class RendezvousFuzzTest {
    private static final String HOST = "127.0.0.1";
    private static final String SECRET = "fuzz-test-secret";
    private static final int INPUTS = 10_000;
    private static final int CLIENTS = 4;
    private static final int WORLD = 3;
    private static final long DEFAULT_SEED = 0x5EED_0F_1215L;
    /** Rank 0's handshake deadline plus a second: no input may hold a client longer. */
    private static final int ANSWER_BOUND_MILLIS = (int) JoinLimits.HANDSHAKE_TIMEOUT.toMillis() + 1000;

    private final ExecutorService pool = Executors.newFixedThreadPool(CLIENTS + WORLD);

    @AfterEach
    void stopThreads() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "a test thread is still running");
    }

    @Test
    @Timeout(60)
    void rankZeroSurvivesMalformedInputAndTheRealRanksStillJoin() throws Exception {
        long seed = Long.getLong("iris.fuzz.seed", DEFAULT_SEED);
        System.out.printf("rendezvous fuzz: seed %d (rerun with -Diris.fuzz.seed=%d), %d inputs%n", seed, seed, INPUTS);
        long start = System.nanoTime();
        RendezvousConfig root = new RendezvousConfig(0, WORLD, HOST, 0, SECRET, Duration.ofSeconds(60), 1 << 20);
        try (RootHub hub = RootHub.listen(root)) {
            int port = hub.boundPort();
            Future<?> waiting = pool.submit(() -> {
                hub.awaitMembers();
                return null;
            });
            AtomicLong slowest = new AtomicLong();
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int first = c;
                clients.add(pool.submit(() -> {
                    for (int i = first; i < INPUTS; i += CLIENTS) {
                        slowest.accumulateAndGet(throwInput(port, seed, i), Math::max);
                    }
                    return null;
                }));
            }
            for (Future<?> client : clients) {
                client.get(50, TimeUnit.SECONDS);
            }
            assertFalse(waiting.isDone(), "rank 0 stopped waiting for the real ranks: " + outcome(waiting));

            long joinStart = System.nanoTime();
            List<Future<Rendezvous>> members = new ArrayList<>();
            for (int r = 1; r < WORLD; r++) {
                RendezvousConfig member = root.withPort(port).withRank(r);
                members.add(pool.submit(() -> Rendezvous.connect(member)));
            }
            waiting.get(10, TimeUnit.SECONDS);
            List<Rendezvous> ranks = new ArrayList<>();
            try {
                for (Future<Rendezvous> m : members) {
                    ranks.add(m.get(10, TimeUnit.SECONDS));
                }
                long joinMillis = (System.nanoTime() - joinStart) / 1_000_000;
                List<Future<byte[][]>> gathers = new ArrayList<>();
                for (Rendezvous rdv : ranks) {
                    gathers.add(pool.submit(() -> rdv.allGather(new byte[] {(byte) rdv.rank()})));
                }
                assertArrayEquals(new byte[][] {{0}, {1}, {2}}, hub.exchange(1, Collective.ALL_GATHER, 0, new byte[] {0}));
                for (Future<byte[][]> g : gathers) {
                    assertArrayEquals(new byte[][] {{0}, {1}, {2}}, g.get(10, TimeUnit.SECONDS));
                }
                long totalMillis = (System.nanoTime() - start) / 1_000_000;
                System.out.printf("rendezvous fuzz: %d inputs turned away (%d refusals), slowest answer %d ms,"
                        + " real ranks joined %d ms after, %d ms in all%n",
                        INPUTS, hub.refusals(), slowest.get(), joinMillis, totalMillis);
                assertTrue(hub.refusals() >= INPUTS, "every input should be turned away, " + hub.refusals() + " were");
                assertTrue(totalMillis < 60_000, "took " + totalMillis + " ms");
            } finally {
                ranks.forEach(Rendezvous::close);
            }
        }
    }

    /** Sends input {@code i}, then reads until rank 0 closes; returns how long that took in ms. */
    private static long throwInput(int port, long seed, int i) throws IOException {
        Random random = new Random(seed + i * 0x9E3779B97F4A7C15L);
        long begin = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), ANSWER_BOUND_MILLIS);
            socket.setSoTimeout(ANSWER_BOUND_MILLIS);
            try {
                if (i % 8 == 7) {
                    badHandshake(socket, random);
                } else {
                    socket.getOutputStream().write(Inputs.malformed(random, i % 8));
                }
                socket.shutdownOutput(); // what a truncated frame looks like: the sender is gone
            } catch (IOException dropped) {
                // Rank 0 may refuse and close before the whole input went out; that is fine.
            }
            drainUntilClosed(socket, i, seed);
        }
        return (System.nanoTime() - begin) / 1_000_000;
    }

    /** A proper join, then a proof that is wrong in one of several ways, or a claim that is refused. */
    private static void badHandshake(Socket socket, Random random) throws IOException {
        int variant = random.nextInt(6);
        String secret = variant == 0 ? "wrong-" + random.nextInt(1000) : SECRET;
        Handshake handshake = new Handshake(JobSecret.of(secret));
        byte[] nonce = handshake.nonce();
        int rank = variant == 4 ? 0 : variant == 5 ? WORLD + random.nextInt(5) : 1 + random.nextInt(WORLD - 1);
        int world = variant == 3 ? WORLD + 1 : WORLD;
        write(socket, new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, rank, world, nonce));
        Frame reply = new FrameReader(1 << 16).read(java.nio.channels.Channels.newChannel(socket.getInputStream()));
        if (!(reply instanceof Frame.Challenge challenge)) {
            return;
        }
        byte[] proof = switch (variant) {
            case 1 -> randomBytes(random, Handshake.PROOF_BYTES);           // a guess
            case 2 -> handshake.memberProof(nonce, challenge.nonce(), rank + 1, world); // for another claim
            default -> handshake.memberProof(nonce, challenge.nonce(), rank, world);    // wrong secret or bad claim
        };
        if (variant == 1 && random.nextBoolean()) {
            proof = randomBytes(random, random.nextInt(64));                // and of the wrong length
        }
        write(socket, new Frame.Proof(proof));
    }

    private static void drainUntilClosed(Socket socket, int i, long seed) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] sink = new byte[4096];
        try {
            for (int reads = 0; reads < 10_000; reads++) {
                if (in.read(sink) < 0) {
                    return;
                }
            }
            throw new AssertionError("input " + i + " (seed " + seed + "): rank 0 kept sending");
        } catch (SocketTimeoutException e) {
            throw new AssertionError("input " + i + " (seed " + seed + "): rank 0 neither answered nor closed within "
                    + ANSWER_BOUND_MILLIS + " ms", e);
        } catch (IOException reset) {
            // Closed with a reset rather than a FIN: closed all the same.
        }
    }

    private static void write(Socket socket, Frame frame) throws IOException {
        ByteBuffer encoded = FrameCodec.encode(frame, 1 << 20);
        socket.getOutputStream().write(encoded.array(), 0, encoded.limit());
    }

    private static byte[] randomBytes(Random random, int n) {
        byte[] out = new byte[n];
        random.nextBytes(out);
        return out;
    }

    private static String outcome(Future<?> future) {
        try {
            future.get(0, TimeUnit.SECONDS);
            return "it returned";
        } catch (Exception e) {
            return e.toString();
        }
    }

    /** The non-interactive malformed inputs, by kind. */
    static final class Inputs {
        private Inputs() {
        }

        static byte[] malformed(Random random, int kind) {
            return switch (kind) {
                case 0 -> randomBytes(random, random.nextInt(300));
                case 1 -> truncated(random);
                case 2 -> wrongLength(random);
                case 3 -> wrongVersionOrMagic(random);
                case 4 -> wrongOrder(random);
                case 5 -> mutated(random);
                default -> concat(header(random.nextInt(), (byte) random.nextInt()), randomBytes(random, random.nextInt(64)));
            };
        }

        private static byte[] truncated(Random random) {
            byte[] whole = bytes(validFrame(random));
            return java.util.Arrays.copyOf(whole, random.nextInt(whole.length));
        }

        private static byte[] wrongLength(Random random) {
            byte[] whole = bytes(validFrame(random));
            int body = whole.length - FrameCodec.HEADER_BYTES;
            int declared = switch (random.nextInt(4)) {
                case 0 -> body + 1 + random.nextInt(16);        // says more than comes
                case 1 -> Math.max(0, body - 1 - random.nextInt(8)); // says less: the rest reads as a new header
                case 2 -> -1 - random.nextInt(Integer.MAX_VALUE); // negative
                default -> FrameCodec.HANDSHAKE_FRAME_LIMIT + 1 + random.nextInt(Integer.MAX_VALUE - 2000); // too large
            };
            ByteBuffer.wrap(whole).putInt(0, declared);
            return whole;
        }

        private static byte[] wrongVersionOrMagic(Random random) {
            int version = FrameCodec.PROTOCOL_VERSION;
            while (version == FrameCodec.PROTOCOL_VERSION) {
                version = random.nextInt(8) - 2;
            }
            boolean badMagic = random.nextBoolean();
            return bytes(new Frame.Join(badMagic ? random.nextInt() : FrameCodec.MAGIC,
                    badMagic ? FrameCodec.PROTOCOL_VERSION : version, 1, WORLD, randomBytes(random, Handshake.NONCE_BYTES)));
        }

        /** Valid frames, but none a joining rank may send first, or a join followed by something else. */
        private static byte[] wrongOrder(Random random) {
            Frame[] misplaced = {
                new Frame.Welcome(),
                new Frame.Request(1, Collective.BARRIER, 0, new byte[0]),
                new Frame.Result(1, Collective.ALL_GATHER, new byte[][] {{1}}),
                new Frame.Failure(false, "no"),
                new Frame.Challenge(randomBytes(random, Handshake.NONCE_BYTES)),
                new Frame.Proof(randomBytes(random, Handshake.PROOF_BYTES)),
                new Frame.Accept(randomBytes(random, Handshake.PROOF_BYTES)),
            };
            Frame wrong = misplaced[random.nextInt(misplaced.length)];
            if (random.nextBoolean()) {
                return bytes(wrong);
            }
            Frame join = new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, 1, WORLD,
                    randomBytes(random, Handshake.NONCE_BYTES));
            return concat(bytes(join), bytes(random.nextBoolean() ? join : wrong));
        }

        private static byte[] mutated(Random random) {
            byte[] whole = bytes(validFrame(random));
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                whole[random.nextInt(whole.length)] ^= (byte) (1 << random.nextInt(8));
            }
            return whole;
        }

        private static Frame validFrame(Random random) {
            return switch (random.nextInt(3)) {
                case 0 -> new Frame.Join(FrameCodec.MAGIC, FrameCodec.PROTOCOL_VERSION, 1, WORLD,
                        randomBytes(random, Handshake.NONCE_BYTES));
                case 1 -> new Frame.Proof(randomBytes(random, Handshake.PROOF_BYTES));
                default -> new Frame.Request(1, Collective.ALL_GATHER, 0, randomBytes(random, random.nextInt(40)));
            };
        }

        private static byte[] header(int length, byte type) {
            return ByteBuffer.allocate(FrameCodec.HEADER_BYTES).putInt(length).put(type).array();
        }

        private static byte[] bytes(Frame frame) {
            ByteBuffer encoded = FrameCodec.encode(frame, 1 << 20);
            return java.util.Arrays.copyOf(encoded.array(), encoded.limit());
        }

        private static byte[] concat(byte[] a, byte[] b) {
            byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
            System.arraycopy(b, 0, out, a.length, b.length);
            return out;
        }
    }
}

package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class FrameCodecTest {
    private static final int LIMIT = 1 << 20;

    @Test
    void everyFrameTypeRoundTrips() {
        byte[] nonce = new byte[Handshake.NONCE_BYTES];
        nonce[0] = 7;
        Frame.Join join = (Frame.Join) roundTrip(new Frame.Join(FrameCodec.MAGIC, 2, 3, 4, nonce));
        assertEquals(FrameCodec.MAGIC, join.magic());
        assertEquals(2, join.version());
        assertEquals(3, join.rank());
        assertEquals(4, join.worldSize());
        assertArrayEquals(nonce, join.nonce());
        assertEquals(FrameCodec.JOIN_BODY_BYTES, FrameCodec.encode(join, LIMIT).getInt(0));

        assertArrayEquals(nonce, ((Frame.Challenge) roundTrip(new Frame.Challenge(nonce))).nonce());
        assertArrayEquals(new byte[] {1, 2}, ((Frame.Proof) roundTrip(new Frame.Proof(new byte[] {1, 2}))).proof());
        assertArrayEquals(new byte[] {3}, ((Frame.Accept) roundTrip(new Frame.Accept(new byte[] {3}))).proof());

        assertInstanceOf(Frame.Welcome.class, roundTrip(new Frame.Welcome()));

        Frame.Request request = (Frame.Request) roundTrip(
                new Frame.Request(7, Collective.BROADCAST, 2, new byte[] {1, 2, 3}));
        assertEquals(7, request.step());
        assertEquals(Collective.BROADCAST, request.op());
        assertEquals(2, request.root());
        assertArrayEquals(new byte[] {1, 2, 3}, request.payload());

        byte[][] payloads = {{9}, {}, new byte[1000]};
        Frame.Result result = (Frame.Result) roundTrip(new Frame.Result(8, Collective.ALL_GATHER, payloads));
        assertEquals(8, result.step());
        assertEquals(Collective.ALL_GATHER, result.op());
        assertEquals(3, result.payloads().length);
        for (int i = 0; i < payloads.length; i++) {
            assertArrayEquals(payloads[i], result.payloads()[i]);
        }

        assertEquals(new Frame.Failure(true, "ranks [2] never joined"),
                roundTrip(new Frame.Failure(true, "ranks [2] never joined")));
    }

    @Test
    void headerIsLengthThenType() {
        ByteBuffer encoded = FrameCodec.encode(new Frame.Request(1, Collective.BARRIER, 0, new byte[0]), LIMIT);
        assertEquals(8 + 1 + 4 + 4, encoded.getInt(0));
        assertEquals(FrameCodec.REQUEST, encoded.get(4));
        assertEquals(FrameCodec.HEADER_BYTES + 17, encoded.remaining());
    }

    @Test
    void oversizeFrameIsRejectedBeforeItsBodyIsAllocatedOrRead() {
        ByteBuffer header = ByteBuffer.allocate(FrameCodec.HEADER_BYTES + 16)
                .putInt(Integer.MAX_VALUE).put(FrameCodec.RESULT).put(new byte[16]).flip();
        ChunkedChannel channel = new ChunkedChannel(header, new Random(1), false);
        RendezvousException e = assertThrows(RendezvousException.class,
                () -> new FrameReader(LIMIT).read(channel));
        assertContains(e, "2147483647");
        assertContains(e, String.valueOf(LIMIT));
        assertEquals(FrameCodec.HEADER_BYTES, header.position(), "must stop reading right after the header");
    }

    @Test
    void limitIsInclusive() {
        byte[] payload = new byte[100];
        Frame.Request request = new Frame.Request(1, Collective.ALL_GATHER, 0, payload);
        int body = 8 + 1 + 4 + 4 + payload.length;
        assertArrayEquals(payload, ((Frame.Request) decode(FrameCodec.encode(request, body), body)).payload());
        assertContains(assertThrows(RendezvousException.class,
                () -> decode(FrameCodec.encode(request, body), body - 1)), "exceeds the limit of " + (body - 1));
    }

    @Test
    void encoderRefusesWhatTheReceiverWouldReject() {
        RendezvousException e = assertThrows(RendezvousException.class, () -> FrameCodec.encode(
                new Frame.Request(3, Collective.ALL_GATHER, 0, new byte[5000]), 4096));
        assertContains(e, "step 3 (allGather)");
        assertContains(e, "5017 bytes");
        assertContains(e, "4096");
    }

    @Test
    void negativeLengthIsRejected() {
        ByteBuffer bytes = ByteBuffer.allocate(5).putInt(-1).put(FrameCodec.WELCOME).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(bytes, LIMIT)), "negative");
    }

    @Test
    void unknownTypeIsRejected() {
        ByteBuffer bytes = ByteBuffer.allocate(5).putInt(0).put((byte) 0x42).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(bytes, LIMIT)), "unknown frame type 0x42");
    }

    @Test
    void truncatedFramesSayHowFarTheyGot() {
        ByteBuffer full = FrameCodec.encode(new Frame.Request(1, Collective.BARRIER, 0, new byte[10]), LIMIT);
        ByteBuffer midBody = full.duplicate().limit(full.limit() - 3);
        assertContains(assertThrows(RendezvousException.class, () -> decode(midBody, LIMIT)),
                "truncated request frame: connection closed after 24 of 27 body bytes");
        ByteBuffer midHeader = full.duplicate().limit(3);
        assertContains(assertThrows(RendezvousException.class, () -> decode(midHeader, LIMIT)),
                "truncated frame: connection closed after 3 of 5 header bytes");
        assertContains(assertThrows(RendezvousException.class, () -> decode(ByteBuffer.allocate(0), LIMIT)),
                "connection closed by peer");
    }

    @Test
    void malformedBodiesNameTheField() {
        // A result claiming one payload of 1000 bytes inside a 17-byte body.
        ByteBuffer lying = ByteBuffer.allocate(5 + 17).putInt(17).put(FrameCodec.RESULT)
                .putLong(1).put(Collective.ALL_GATHER.code).putInt(1).putInt(1000).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(lying, LIMIT)),
                "malformed result frame: payload 0 needs 1000 bytes but only 0 are left");

        // A huge payload count must not become a huge array.
        ByteBuffer count = ByteBuffer.allocate(5 + 13).putInt(13).put(FrameCodec.RESULT)
                .putLong(1).put(Collective.ALL_GATHER.code).putInt(Integer.MAX_VALUE).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(count, LIMIT)), "payload count");

        ByteBuffer op = ByteBuffer.allocate(5 + 17).putInt(17).put(FrameCodec.REQUEST)
                .putLong(1).put((byte) 9).putInt(0).putInt(0).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(op, LIMIT)), "unknown operation code 0x09");

        ByteBuffer trailing = ByteBuffer.allocate(5 + 1).putInt(1).put(FrameCodec.WELCOME).put((byte) 0).flip();
        assertContains(assertThrows(RendezvousException.class, () -> decode(trailing, LIMIT)),
                "1 unexpected bytes after the last field");
    }

    @Test
    void framesArriveIntactWhenTheSocketHandsOverOneByteAtATime() {
        ByteBuffer two = ByteBuffer.allocate(1000);
        two.put(FrameCodec.encode(new Frame.Request(4, Collective.ALL_GATHER, 0, new byte[] {5, 6}), LIMIT));
        two.put(FrameCodec.encode(new Frame.Failure(false, "x"), LIMIT));
        two.flip();
        ChunkedChannel channel = new ChunkedChannel(two, new Random(3), true);
        FrameReader reader = new FrameReader(LIMIT);
        Frame first = readNext(reader, channel);
        assertArrayEquals(new byte[] {5, 6}, ((Frame.Request) first).payload());
        assertEquals(new Frame.Failure(false, "x"), readNext(reader, channel));
        assertNull(reader.read(new ChunkedChannel(ByteBuffer.allocate(0), new Random(4), true) {
            @Override
            public int read(ByteBuffer dst) {
                return 0; // a non-blocking socket with nothing to read yet
            }
        }));
    }

    @Test
    void failureNoticesAreCutToFitTheLimit() {
        String longMessage = "ranks never joined: " + "x".repeat(100_000);
        ByteBuffer notice = FrameCodec.encodeFailure(true, longMessage, 300);
        Frame.Failure decoded = (Frame.Failure) decode(notice, 300);
        assertTrue(decoded.timeout());
        assertTrue(decoded.message().startsWith("ranks never joined: x"));
        assertNull(FrameCodec.encodeFailure(true, "x", 4));
    }

    /**
     * Random and mutated byte sequences, handed over in random chunks: the decoder returns
     * frames or throws RendezvousException, and nothing else; no hang, no large allocation.
     */
    @Test
    void fuzzedInputOnlyEverYieldsFramesOrRendezvousExceptions() {
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
            Random random = new Random(0x1215L);
            int limit = 4096;
            List<ByteBuffer> seeds = List.of(
                    FrameCodec.encode(new Frame.Join(FrameCodec.MAGIC, 2, 1, 4, new byte[Handshake.NONCE_BYTES]), limit),
                    FrameCodec.encode(new Frame.Challenge(new byte[Handshake.NONCE_BYTES]), limit),
                    FrameCodec.encode(new Frame.Proof(new byte[Handshake.PROOF_BYTES]), limit),
                    FrameCodec.encode(new Frame.Welcome(), limit),
                    FrameCodec.encode(new Frame.Request(5, Collective.BROADCAST, 2, new byte[40]), limit),
                    FrameCodec.encode(new Frame.Result(5, Collective.ALL_GATHER, new byte[][] {{1}, {}, {2, 3}}), limit),
                    FrameCodec.encode(new Frame.Failure(false, "boom"), limit));
            com.sun.management.ThreadMXBean threads = allocationCounter();
            long worstAllocation = 0;
            int frames = 0;
            for (int i = 0; i < 2000; i++) {
                byte[] input = i % 2 == 0 ? randomBytes(random) : mutated(seeds.get(random.nextInt(seeds.size())), random);
                long before = threads == null ? 0 : threads.getCurrentThreadAllocatedBytes();
                ChunkedChannel channel = new ChunkedChannel(ByteBuffer.wrap(input), random, random.nextBoolean());
                FrameReader reader = new FrameReader(limit);
                try {
                    for (int reads = 0; reads < 100_000; reads++) {
                        if (reader.read(channel) != null) {
                            frames++;
                        }
                    }
                    fail("decoder neither finished nor failed on input " + i);
                } catch (RendezvousException expected) {
                    // every input ends here at the latest: at end of stream
                } catch (Throwable other) {
                    throw new AssertionError("input " + i + " raised " + other, other);
                }
                if (threads != null) {
                    worstAllocation = Math.max(worstAllocation, threads.getCurrentThreadAllocatedBytes() - before);
                }
            }
            assertTrue(frames > 0, "the mutated seeds should still decode now and then");
            assertTrue(worstAllocation < 1 << 20, "one input allocated " + worstAllocation + " bytes");
        });
    }

    private static com.sun.management.ThreadMXBean allocationCounter() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
            return t;
        }
        return null;
    }

    private static byte[] randomBytes(Random random) {
        byte[] bytes = new byte[random.nextInt(4096)];
        random.nextBytes(bytes);
        if (bytes.length >= 5 && random.nextBoolean()) {
            // A plausible header makes the body parser, not just the header check, see garbage.
            ByteBuffer.wrap(bytes).putInt(random.nextInt(bytes.length)).put((byte) (1 + random.nextInt(5)));
        }
        return bytes;
    }

    private static byte[] mutated(ByteBuffer seed, Random random) {
        byte[] bytes = new byte[seed.remaining()];
        seed.duplicate().get(bytes);
        int flips = random.nextInt(4);
        for (int f = 0; f < flips; f++) {
            bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
        }
        int cut = random.nextInt(4) == 0 ? random.nextInt(bytes.length + 1) : bytes.length;
        byte[] out = new byte[cut];
        System.arraycopy(bytes, 0, out, 0, cut);
        return out;
    }

    private static Frame roundTrip(Frame frame) {
        return decode(FrameCodec.encode(frame, LIMIT), LIMIT);
    }

    /** Exactly one frame from {@code bytes}, read the way a socket would deliver it. */
    private static Frame decode(ByteBuffer bytes, int limit) {
        ChunkedChannel channel = new ChunkedChannel(bytes.duplicate(), new Random(7), true);
        Frame frame = readNext(new FrameReader(limit), channel);
        assertEquals(0, channel.remaining(), "bytes left after the frame");
        return frame;
    }

    private static Frame readNext(FrameReader reader, ChunkedChannel channel) {
        for (int i = 0; i < 1_000_000; i++) {
            Frame frame = reader.read(channel);
            if (frame != null) {
                return frame;
            }
        }
        throw new AssertionError("no frame after a million reads");
    }

    private static void assertContains(Throwable e, String part) {
        assertTrue(e.getMessage() != null && e.getMessage().contains(part),
                () -> "expected message containing \"" + part + "\", got: " + e.getMessage());
    }

    /** Hands out a buffer in random small pieces, sometimes none, like a non-blocking socket. */
    private static class ChunkedChannel implements ReadableByteChannel {
        private final ByteBuffer source;
        private final Random random;
        private final boolean sometimesEmpty;

        ChunkedChannel(ByteBuffer source, Random random, boolean sometimesEmpty) {
            this.source = source;
            this.random = random;
            this.sometimesEmpty = sometimesEmpty;
        }

        int remaining() {
            return source.remaining();
        }

        @Override
        public int read(ByteBuffer dst) {
            if (!source.hasRemaining()) {
                return -1;
            }
            if (sometimesEmpty && random.nextInt(4) == 0) {
                return 0;
            }
            int n = Math.min(dst.remaining(), Math.min(source.remaining(), 1 + random.nextInt(64)));
            ByteBuffer slice = source.slice().limit(n);
            dst.put(slice);
            source.position(source.position() + n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }
}

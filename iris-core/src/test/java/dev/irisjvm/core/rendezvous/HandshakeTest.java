package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The handshake's proofs, and who may join without a secret. */
@Timeout(20)
class HandshakeTest {
    private static final byte[] MEMBER_NONCE = filled(1);
    private static final byte[] ROOT_NONCE = filled(2);

    @Test
    void proofsBindSecretRoleNoncesRankAndWorld() {
        Handshake a = new Handshake(JobSecret.of("secret"));
        byte[] proof = a.memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 4);
        assertEquals(Handshake.PROOF_BYTES, proof.length);
        assertArrayEquals(proof, new Handshake(JobSecret.of("secret")).memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 4),
                "the same inputs give the same proof on another rank");
        assertFalse(Handshake.matches(proof, new Handshake(JobSecret.of("secreT")).memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 4)));
        assertFalse(Handshake.matches(proof, a.rootProof(MEMBER_NONCE, ROOT_NONCE, 1, 4)), "roles differ");
        assertFalse(Handshake.matches(proof, a.memberProof(ROOT_NONCE, MEMBER_NONCE, 1, 4)), "nonces are ordered");
        assertFalse(Handshake.matches(proof, a.memberProof(MEMBER_NONCE, filled(3), 1, 4)), "a fresh nonce, a new proof");
        assertFalse(Handshake.matches(proof, a.memberProof(MEMBER_NONCE, ROOT_NONCE, 2, 4)), "rank is covered");
        assertFalse(Handshake.matches(proof, a.memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 5)), "world is covered");
        assertFalse(Handshake.matches(proof, new byte[0]));
        assertFalse(Handshake.matches(proof, java.util.Arrays.copyOf(proof, 31)));
        assertFalse(java.util.Arrays.equals(a.nonce(), a.nonce()), "nonces are fresh");
    }

    @Test
    void noSecretStillRunsTheHandshakeButDiffersFromEverySecret() {
        JobSecret none = JobSecret.of("");
        assertFalse(none.isSet());
        assertTrue(JobSecret.of("x").isSet());
        byte[] open = new Handshake(none).memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 2);
        assertFalse(Handshake.matches(open, new Handshake(JobSecret.of("x")).memberProof(MEMBER_NONCE, ROOT_NONCE, 1, 2)));
        assertEquals("JobSecret[<set>]", JobSecret.of("hunter2").toString());
        assertFalse(new RendezvousConfig(0, 2, "127.0.0.1", 1, "hunter2").toString().contains("hunter2"));
    }

    @Test
    void withoutASecretOnlyLoopbackIsAllowed() {
        for (String host : new String[] {"0.0.0.0", "10.1.2.3"}) {
            RendezvousException e = assertThrows(RendezvousException.class,
                    () -> Rendezvous.listen(new RendezvousConfig(0, 2, host, 0, "")));
            assertTrue(e.getMessage().contains("is not on a loopback address and no job secret is set"), e.getMessage());
            assertTrue(e.getMessage().contains("IRIS_JOB_TOKEN=") && e.getMessage().contains("IRIS_JOB_TOKEN_FILE="),
                    e.getMessage());
        }
        // A member refuses too, before it connects anywhere.
        RendezvousException e = assertThrows(RendezvousException.class,
                () -> Rendezvous.connect(new RendezvousConfig(1, 2, "10.1.2.3", 29500, "", Duration.ofSeconds(1), 1024)));
        assertTrue(e.getMessage().startsWith("rank 1: the rendezvous at 10.1.2.3:29500 is not on a loopback address"),
                e.getMessage());
        // A world of one binds nothing and needs nothing.
        Rendezvous.connect(new RendezvousConfig(0, 1, "0.0.0.0", 0, "")).close();
    }

    @Test
    void withoutASecretRanksStillMeetOnLoopback() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Rendezvous.Listener listener = Rendezvous.listen(new RendezvousConfig(0, 2, "127.0.0.1", 0, "",
                Duration.ofSeconds(10), 1 << 16))) {
            Future<Rendezvous> zero = pool.submit(listener::awaitMembers);
            try (Rendezvous one = Rendezvous.connect(new RendezvousConfig(1, 2, "127.0.0.1", listener.boundPort(), "",
                    Duration.ofSeconds(10), 1 << 16)); Rendezvous z = zero.get(10, TimeUnit.SECONDS)) {
                assertEquals(1, one.rank());
                assertEquals(0, z.rank());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aRankZeroThatCannotProveTheSecretIsRefused() throws Exception {
        // An impostor listening on the port: it answers the join and accepts any proof, blindly.
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ServerSocket impostor = new ServerSocket()) {
            impostor.bind(new InetSocketAddress("127.0.0.1", 0));
            Future<?> fake = pool.submit(() -> {
                try (Socket s = impostor.accept()) {
                    s.setSoTimeout(5000);
                    FrameReader reader = new FrameReader(1 << 16);
                    assertInstanceOf(Frame.Join.class, reader.read(Channels.newChannel(s.getInputStream())));
                    send(s, new Frame.Challenge(filled(9)));
                    assertInstanceOf(Frame.Proof.class, reader.read(Channels.newChannel(s.getInputStream())));
                    send(s, new Frame.Accept(filled(7)));
                    send(s, new Frame.Welcome());
                    s.getInputStream().read();
                }
                return null;
            });
            RendezvousException e = assertThrows(RendezvousException.class, () -> Rendezvous.connect(
                    new RendezvousConfig(1, 2, "127.0.0.1", impostor.getLocalPort(), "secret", Duration.ofSeconds(5), 1 << 16)));
            assertTrue(e.getMessage().contains("did not prove that it holds this job's secret"), e.getMessage());
            fake.get(5, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    private static void send(Socket s, Frame frame) throws java.io.IOException {
        ByteBuffer b = FrameCodec.encode(frame, 1 << 16);
        s.getOutputStream().write(b.array(), 0, b.limit());
    }

    private static byte[] filled(int value) {
        byte[] b = new byte[Handshake.NONCE_BYTES];
        java.util.Arrays.fill(b, (byte) value);
        return b;
    }
}

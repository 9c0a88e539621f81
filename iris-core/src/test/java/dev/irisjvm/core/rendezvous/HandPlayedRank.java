package dev.irisjvm.core.rendezvous;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;

/**
 * A rank played by hand over a blocking socket, for tests that need to send what a real rank
 * never would: a handshake with the wrong secret, a cut-off frame, frames in the wrong order.
 * Every read ends within the socket timeout given.
 */
final class HandPlayedRank implements AutoCloseable {
    static final int MAX_FRAME = 8 << 20;

    private final Socket socket;
    private final ReadableByteChannel in;
    private final Handshake handshake;
    private final FrameReader reader = new FrameReader(MAX_FRAME);

    HandPlayedRank(String host, int port, String secret, int timeoutMillis) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), timeoutMillis);
        socket.setSoTimeout(timeoutMillis);
        InputStream stream = socket.getInputStream();
        in = Channels.newChannel(stream);
        handshake = new Handshake(JobSecret.of(secret));
    }

    Socket socket() {
        return socket;
    }

    void send(Frame frame) throws IOException {
        send(FrameCodec.encode(frame, MAX_FRAME));
    }

    void send(ByteBuffer bytes) throws IOException {
        byte[] out = new byte[bytes.remaining()];
        bytes.get(out);
        socket.getOutputStream().write(out);
    }

    /** The next frame; a blocking channel, so null never comes back. */
    Frame receive() {
        return reader.read(in);
    }

    /**
     * The whole handshake as {@code rank} of {@code world} with this peer's secret, joining with
     * protocol {@code version}: returns rank 0's last answer (accept or failure notice).
     */
    Frame handshake(int rank, int world, int version) throws IOException {
        byte[] nonce = handshake.nonce();
        send(new Frame.Join(FrameCodec.MAGIC, version, rank, world, nonce));
        Frame reply = receive();
        if (!(reply instanceof Frame.Challenge challenge)) {
            return reply;
        }
        send(new Frame.Proof(handshake.memberProof(nonce, challenge.nonce(), rank, world)));
        return receive();
    }

    /** The message of rank 0's failure notice after a handshake; fails the test otherwise. */
    String refusal(int rank, int world) throws IOException {
        Frame last = handshake(rank, world, FrameCodec.PROTOCOL_VERSION);
        if (last instanceof Frame.Failure failure) {
            return failure.message();
        }
        throw new AssertionError("expected a failure notice, got a " + last.describe());
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

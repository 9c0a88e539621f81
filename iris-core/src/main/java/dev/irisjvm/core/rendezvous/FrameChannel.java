package dev.irisjvm.core.rendezvous;

import dev.irisjvm.core.IrisTimeoutException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.function.Supplier;

/**
 * One non-blocking TCP connection carrying frames. Non-blocking so that every wait, for
 * reading and for writing alike, ends at a deadline: a blocking socket write has no timeout,
 * and a peer that stops reading must not be able to hang us.
 *
 * <p>Rank 0 may additionally register the channel with its own selector to wait on all
 * members at once; waits here use a private selector opened on first need.
 */
final class FrameChannel implements AutoCloseable {
    private final SocketChannel channel;
    private final FrameReader reader;
    private String peer;
    private Selector waiter;
    private SelectionKey waitKey;

    FrameChannel(SocketChannel channel, int maxFrameBytes, String peer) {
        this.channel = channel;
        this.reader = new FrameReader(maxFrameBytes);
        this.peer = peer;
    }

    SocketChannel channel() {
        return channel;
    }

    /** Who is at the other end, for messages: a remote address until the peer says its rank. */
    String peer() {
        return peer;
    }

    void identify(String peer, int maxFrameBytes) {
        this.peer = peer;
        reader.limit(maxFrameBytes);
    }

    /** A complete frame if one has arrived, else null; never waits. */
    Frame poll() {
        return reader.read(channel);
    }

    /**
     * The next frame, waiting at most until {@code deadline}.
     *
     * @throws IrisTimeoutException with {@code timeoutMessage} once the deadline passes
     * @throws RendezvousException  when the connection ends or carries a malformed frame
     */
    Frame receive(Deadline deadline, Supplier<String> timeoutMessage) {
        while (true) {
            Frame frame = poll();
            if (frame != null) {
                return frame;
            }
            await(SelectionKey.OP_READ, deadline, timeoutMessage);
        }
    }

    /** Writes all of {@code frame}, waiting for room in the socket at most until {@code deadline}. */
    void send(ByteBuffer frame, Deadline deadline, Supplier<String> timeoutMessage) {
        try {
            while (frame.hasRemaining()) {
                if (channel.write(frame) == 0) {
                    await(SelectionKey.OP_WRITE, deadline, timeoutMessage);
                }
            }
        } catch (IOException e) {
            throw new RendezvousException("connection to " + peer + " failed while sending: "
                    + FrameReader.reason(e), e);
        }
    }

    /**
     * Writes {@code frame} only as far as the socket takes it now; true when all of it went.
     * For rank 0's handshake replies: a few dozen bytes always fit into a new connection, and
     * rank 0 must never wait on a peer that has not authenticated.
     */
    boolean offer(ByteBuffer frame) {
        try {
            channel.write(frame);
            return !frame.hasRemaining();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Sends what fits into the socket right now, then closes. For failure notices: small
     * enough to fit, and the sender is giving up anyway, so waiting would only delay it.
     */
    void sendAndClose(ByteBuffer notice) {
        try {
            if (notice != null) {
                channel.write(notice);
            }
            // FIN after the notice, then discard unread input: closing with unread bytes makes
            // the kernel send a reset, which can overtake the notice on the peer's side.
            channel.shutdownOutput();
            ByteBuffer sink = ByteBuffer.allocate(8192);
            for (int i = 0; i < 256 && channel.read(sink.clear()) > 0; i++) {
                // discarding
            }
        } catch (IOException ignored) {
            // Best effort: the peer may be gone already, which is often why we are failing.
        }
        close();
    }

    private void await(int ops, Deadline deadline, Supplier<String> timeoutMessage) {
        if (Thread.currentThread().isInterrupted()) {
            // Selector.select returns at once while the flag is set; fail instead of spinning.
            throw new RendezvousException("interrupted while waiting for " + peer);
        }
        if (deadline.expired()) {
            throw new IrisTimeoutException(timeoutMessage.get());
        }
        try {
            if (waiter == null) {
                waiter = Selector.open();
                waitKey = channel.register(waiter, ops);
            } else {
                waitKey.interestOps(ops);
            }
            waiter.select(deadline.waitMillis());
            waiter.selectedKeys().clear();
        } catch (IOException e) {
            throw new RendezvousException("waiting for " + peer + " failed: " + FrameReader.reason(e), e);
        }
    }

    @Override
    public void close() {
        // The selector first: a channel still registered somewhere keeps its socket open.
        closeQuietly(waiter);
        closeQuietly(channel);
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // Closing is cleanup; there is nothing useful to do with a failure here.
        }
    }
}

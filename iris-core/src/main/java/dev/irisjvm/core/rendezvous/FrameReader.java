package dev.irisjvm.core.rendezvous;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/**
 * Assembles frames from a channel that may hand over bytes a few at a time (a non-blocking
 * socket). It reads the header and then exactly the body it declares, never further, so bytes
 * of a next frame stay in the socket for the next call.
 */
final class FrameReader {
    private final ByteBuffer header = ByteBuffer.allocate(FrameCodec.HEADER_BYTES);
    private ByteBuffer body; // null while the header is still being read
    private byte type;
    private int limit;

    FrameReader(int maxFrameBytes) {
        this.limit = maxFrameBytes;
    }

    /** Changes the limit for frames whose header has not been read yet. */
    void limit(int maxFrameBytes) {
        this.limit = maxFrameBytes;
    }

    /**
     * The next complete frame, or null when the channel has no more bytes for now.
     *
     * @throws RendezvousException on end of stream, an I/O error, or a malformed frame;
     *                             the channel is out of step afterwards and should be closed
     */
    Frame read(ReadableByteChannel channel) {
        try {
            if (body == null) {
                if (!fill(channel, header)) {
                    return null;
                }
                header.flip();
                int length = header.getInt();
                byte declared = header.get();
                header.clear();
                FrameCodec.checkHeader(length, declared, limit);
                type = declared;
                body = ByteBuffer.allocate(length);
            }
            if (!fill(channel, body)) {
                return null;
            }
            ByteBuffer complete = body.flip();
            body = null;
            return FrameCodec.decodeBody(type, complete);
        } catch (IOException e) {
            throw new RendezvousException("connection failed: " + reason(e), e);
        }
    }

    /** True once {@code buf} is full; false when the channel has nothing more right now. */
    private boolean fill(ReadableByteChannel channel, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            int n = channel.read(buf);
            if (n < 0) {
                throw endOfStream();
            }
            if (n == 0) {
                return false;
            }
        }
        return true;
    }

    private RendezvousException endOfStream() {
        if (body != null) {
            return new RendezvousException(String.format(
                    "truncated %s frame: connection closed after %d of %d body bytes",
                    FrameCodec.typeName(type), body.position(), body.capacity()));
        }
        if (header.position() > 0) {
            return new RendezvousException(String.format(
                    "truncated frame: connection closed after %d of %d header bytes",
                    header.position(), FrameCodec.HEADER_BYTES));
        }
        return new RendezvousException("connection closed by peer");
    }

    static String reason(IOException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}

package dev.irisjvm.core.rendezvous;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The rendezvous wire format. Every frame is
 * <pre>
 *   int32 length   big-endian, bytes of body only; 0 &le; length &le; the receiver's limit
 *   uint8 type     1 join, 2 welcome, 3 request, 4 result, 5 failure, 6 challenge, 7 proof, 8 accept
 *   body           length bytes, laid out per type (below)
 * </pre>
 * Inside bodies, integers are big-endian, {@code bytes} is an int32 length then that many
 * bytes, and {@code string} is {@code bytes} holding UTF-8:
 * <pre>
 *   join      int32 magic "IRIS", int32 version, int32 rank, int32 worldSize, bytes memberNonce
 *   challenge bytes rootNonce
 *   proof     bytes memberProof
 *   accept    bytes rootProof
 *   welcome   (empty)
 *   request   int64 step, uint8 op, int32 root, bytes payload
 *   result    int64 step, uint8 op, int32 count, count x bytes payload
 *   failure   uint8 timeout (0 or 1), string message
 * </pre>
 * A connection starts with join, challenge, proof, accept ({@link Handshake}), then waits for
 * the welcome. Version 1 sent the job token itself in the join frame; version 2 sends none.
 * The length and type are checked before the body is allocated, so a peer (or a stray
 * client speaking another protocol) can never make a rank allocate more than its limit.
 * Every nested length is checked against the bytes actually left, so decoding malformed
 * input only ever ends in a {@link RendezvousException}.
 */
final class FrameCodec {
    static final int HEADER_BYTES = 5;
    static final int MAGIC = 0x49524953; // "IRIS"
    static final int PROTOCOL_VERSION = 2;

    /**
     * The largest frame rank 0 reads from a connection that has not yet authenticated: an
     * unknown client gets no say over how much rank 0 allocates. Handshake frames are far smaller.
     */
    static final int HANDSHAKE_FRAME_LIMIT = 1024;

    static final byte JOIN = 1;
    static final byte WELCOME = 2;
    static final byte REQUEST = 3;
    static final byte RESULT = 4;
    static final byte FAILURE = 5;
    static final byte CHALLENGE = 6;
    static final byte PROOF = 7;
    static final byte ACCEPT = 8;

    /** Body of a join frame: four int32 and the nonce with its length; the largest handshake frame. */
    static final int JOIN_BODY_BYTES = 4 * 4 + 4 + Handshake.NONCE_BYTES;
    /** The part of a failure message kept when it has to be cut to fit the limit. */
    private static final int FAILURE_MESSAGE_MAX_CHARS = 4000;

    private FrameCodec() {
    }

    /**
     * Header plus body, ready to write. Refuses, rather than sends, a frame the receiver
     * would reject, so that the rank that made it too large is the one that explains why.
     */
    static ByteBuffer encode(Frame frame, int maxFrameBytes) {
        long bodyBytes = bodyBytes(frame);
        if (bodyBytes > maxFrameBytes) {
            throw new RendezvousException(String.format(
                    "%s needs a frame of %d bytes, over the limit of %d bytes (maxFrameBytes)",
                    frame.describe(), bodyBytes, maxFrameBytes));
        }
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + (int) bodyBytes);
        out.putInt((int) bodyBytes).put(typeOf(frame));
        if (frame instanceof Frame.Join j) {
            out.putInt(j.magic()).putInt(j.version()).putInt(j.rank()).putInt(j.worldSize());
            putBytes(out, j.nonce());
        } else if (frame instanceof Frame.Challenge c) {
            putBytes(out, c.nonce());
        } else if (frame instanceof Frame.Proof p) {
            putBytes(out, p.proof());
        } else if (frame instanceof Frame.Accept a) {
            putBytes(out, a.proof());
        } else if (frame instanceof Frame.Request r) {
            out.putLong(r.step()).put(r.op().code).putInt(r.root());
            putBytes(out, r.payload());
        } else if (frame instanceof Frame.Result r) {
            out.putLong(r.step()).put(r.op().code).putInt(r.payloads().length);
            for (byte[] p : r.payloads()) {
                putBytes(out, p);
            }
        } else if (frame instanceof Frame.Failure f) {
            out.put((byte) (f.timeout() ? 1 : 0));
            putBytes(out, utf8(f.message()));
        }
        return out.flip();
    }

    /**
     * A failure notice cut down to fit {@code maxFrameBytes}, or null when even an empty one
     * would not: notices are best effort and must never be the reason something else fails.
     */
    static ByteBuffer encodeFailure(boolean timeout, String message, int maxFrameBytes) {
        int fixed = 1 + 4;
        if (maxFrameBytes < fixed) {
            return null;
        }
        int room = Math.min(FAILURE_MESSAGE_MAX_CHARS, (maxFrameBytes - fixed) / 3); // <= 3 UTF-8 bytes a char
        String cut = message.length() > room ? message.substring(0, room) : message;
        return encode(new Frame.Failure(timeout, cut), maxFrameBytes);
    }

    /** Validates a header before anything is allocated for its body. */
    static void checkHeader(int length, byte type, int maxFrameBytes) {
        if (length < 0) {
            throw new RendezvousException("frame header declares a negative body length (" + length + ")");
        }
        if (type < JOIN || type > ACCEPT) {
            throw new RendezvousException(String.format(
                    "frame header declares unknown frame type 0x%02x (length %d)", type & 0xff, length));
        }
        if (length > maxFrameBytes) {
            throw new RendezvousException(String.format(
                    "%s frame of %d bytes exceeds the limit of %d bytes (maxFrameBytes); not reading it",
                    typeName(type), length, maxFrameBytes));
        }
    }

    /** Decodes a complete body whose header passed {@link #checkHeader}. */
    static Frame decodeBody(byte type, ByteBuffer body) {
        BodyReader in = new BodyReader(body, typeName(type));
        Frame frame = switch (type) {
            case JOIN -> new Frame.Join(in.int32("magic"), in.int32("version"), in.int32("rank"),
                    in.int32("world size"), in.bytes("nonce"));
            case CHALLENGE -> new Frame.Challenge(in.bytes("nonce"));
            case PROOF -> new Frame.Proof(in.bytes("proof"));
            case ACCEPT -> new Frame.Accept(in.bytes("proof"));
            case WELCOME -> new Frame.Welcome();
            case REQUEST -> new Frame.Request(in.int64("step"), in.collective(), in.int32("root"),
                    in.bytes("payload"));
            case RESULT -> new Frame.Result(in.int64("step"), in.collective(), in.payloads());
            case FAILURE -> new Frame.Failure(in.flag("timeout flag"), in.string("message"));
            default -> throw new RendezvousException(String.format("unknown frame type 0x%02x", type & 0xff));
        };
        in.expectEnd();
        return frame;
    }

    static String typeName(byte type) {
        return switch (type) {
            case JOIN -> "join";
            case WELCOME -> "welcome";
            case REQUEST -> "request";
            case RESULT -> "result";
            case FAILURE -> "failure";
            case CHALLENGE -> "challenge";
            case PROOF -> "proof";
            case ACCEPT -> "accept";
            default -> String.format("type-0x%02x", type & 0xff);
        };
    }

    private static byte typeOf(Frame frame) {
        if (frame instanceof Frame.Join) {
            return JOIN;
        } else if (frame instanceof Frame.Challenge) {
            return CHALLENGE;
        } else if (frame instanceof Frame.Proof) {
            return PROOF;
        } else if (frame instanceof Frame.Accept) {
            return ACCEPT;
        } else if (frame instanceof Frame.Welcome) {
            return WELCOME;
        } else if (frame instanceof Frame.Request) {
            return REQUEST;
        } else if (frame instanceof Frame.Result) {
            return RESULT;
        }
        return FAILURE;
    }

    // long: an allGather result of many large payloads may not fit an int.
    private static long bodyBytes(Frame frame) {
        if (frame instanceof Frame.Join j) {
            return 4 * 4 + 4L + j.nonce().length;
        } else if (frame instanceof Frame.Challenge c) {
            return 4L + c.nonce().length;
        } else if (frame instanceof Frame.Proof p) {
            return 4L + p.proof().length;
        } else if (frame instanceof Frame.Accept a) {
            return 4L + a.proof().length;
        } else if (frame instanceof Frame.Request r) {
            return 8 + 1 + 4 + 4L + r.payload().length;
        } else if (frame instanceof Frame.Result r) {
            long total = 8 + 1 + 4;
            for (byte[] p : r.payloads()) {
                total += 4L + p.length;
            }
            return total;
        } else if (frame instanceof Frame.Failure f) {
            return 1 + 4L + utf8(f.message()).length;
        }
        return 0;
    }

    private static void putBytes(ByteBuffer out, byte[] bytes) {
        out.putInt(bytes.length).put(bytes);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads fields of one body, turning every shortfall into a message that names the field. */
    private static final class BodyReader {
        private final ByteBuffer body;
        private final String frameName;

        BodyReader(ByteBuffer body, String frameName) {
            this.body = body;
            this.frameName = frameName;
        }

        int int32(String field) {
            need(4, field);
            return body.getInt();
        }

        long int64(String field) {
            need(8, field);
            return body.getLong();
        }

        boolean flag(String field) {
            need(1, field);
            byte b = body.get();
            if (b != 0 && b != 1) {
                throw malformed(field + " must be 0 or 1, got " + b);
            }
            return b == 1;
        }

        Collective collective() {
            need(1, "operation");
            byte code = body.get();
            Collective op = Collective.fromCode(code);
            if (op == null) {
                throw malformed(String.format("unknown operation code 0x%02x", code & 0xff));
            }
            return op;
        }

        byte[] bytes(String field) {
            int length = int32(field + " length");
            if (length < 0) {
                throw malformed(field + " length is negative (" + length + ")");
            }
            need(length, field);
            byte[] out = new byte[length];
            body.get(out);
            return out;
        }

        String string(String field) {
            return new String(bytes(field), StandardCharsets.UTF_8);
        }

        byte[][] payloads() {
            int count = int32("payload count");
            // Each payload needs at least its 4-byte length, which bounds the array we allocate.
            if (count < 0 || count > body.remaining() / 4) {
                throw malformed("payload count " + count + " does not fit in the "
                        + body.remaining() + " bytes left");
            }
            byte[][] out = new byte[count][];
            for (int i = 0; i < count; i++) {
                out[i] = bytes("payload " + i);
            }
            return out;
        }

        void expectEnd() {
            if (body.hasRemaining()) {
                throw malformed(body.remaining() + " unexpected bytes after the last field");
            }
        }

        private void need(int bytes, String field) {
            if (body.remaining() < bytes) {
                throw malformed(field + " needs " + bytes + " bytes but only " + body.remaining() + " are left");
            }
        }

        private RendezvousException malformed(String detail) {
            return new RendezvousException("malformed " + frameName + " frame: " + detail);
        }
    }
}

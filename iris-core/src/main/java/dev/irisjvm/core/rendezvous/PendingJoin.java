package dev.irisjvm.core.rendezvous;

/**
 * Rank 0's side of one connection that has not yet authenticated: it moves from waiting for the
 * join frame to waiting for the proof (see {@link Handshake}), and is dropped at its deadline.
 *
 * <p>What it answers a refused peer names the protocol step that went wrong and nothing about
 * the secret: a failed proof reads the same whether it was short, long or merely wrong.
 */
final class PendingJoin {
    /** The whole reply to a failed proof; deliberately free of anything derived from the secret. */
    static final String AUTHENTICATION_FAILED = "authentication failed: the joining process did not prove that it"
            + " holds this job's secret; every rank needs the same IRIS_JOB_TOKEN or IRIS_JOB_TOKEN_FILE"
            + " (bin/iris-run sets one per launch)";

    final FrameChannel channel;
    final Deadline deadline;
    private Frame.Join join;   // null until the join frame arrived
    private byte[] rootNonce;
    private boolean authenticated;

    PendingJoin(FrameChannel channel, Deadline deadline) {
        this.channel = channel;
        this.deadline = deadline;
    }

    /** True until a well-formed join arrived: a connection that has said nothing matters least. */
    boolean silent() {
        return join == null;
    }

    boolean authenticated() {
        return authenticated;
    }

    /** Who the peer claims to be; valid once {@link #authenticated()}. */
    Frame.Join claim() {
        return join;
    }

    /**
     * Takes the next frame of the handshake, answering the join with a challenge.
     *
     * @return null to go on (check {@link #authenticated()}), else why the peer is refused
     */
    String advance(Frame frame, Handshake handshake, int maxFrameBytes) {
        if (join == null) {
            return onJoin(frame, handshake, maxFrameBytes);
        }
        if (!(frame instanceof Frame.Proof proof)) {
            return channel.peer() + " sent a " + frame.describe() + " instead of a proof frame";
        }
        byte[] expected = handshake.memberProof(join.nonce(), rootNonce, join.rank(), join.worldSize());
        if (!Handshake.matches(expected, proof.proof())) {
            return AUTHENTICATION_FAILED;
        }
        authenticated = true;
        return null;
    }

    /** Rank 0's proof for the accept frame; valid once {@link #authenticated()}. */
    byte[] rootProof(Handshake handshake) {
        return handshake.rootProof(join.nonce(), rootNonce, join.rank(), join.worldSize());
    }

    private String onJoin(Frame frame, Handshake handshake, int maxFrameBytes) {
        if (!(frame instanceof Frame.Join j)) {
            return channel.peer() + " sent a " + frame.describe() + " instead of a join frame";
        }
        if (j.magic() != FrameCodec.MAGIC) {
            return String.format("%s is not an Iris rendezvous client (magic 0x%08x, expected 0x%08x)",
                    channel.peer(), j.magic(), FrameCodec.MAGIC);
        }
        if (j.version() != FrameCodec.PROTOCOL_VERSION) {
            return String.format("rank %d speaks rendezvous protocol version %d, rank 0 speaks %d",
                    j.rank(), j.version(), FrameCodec.PROTOCOL_VERSION);
        }
        if (j.nonce().length != Handshake.NONCE_BYTES) {
            return String.format("malformed join frame: nonce of %d bytes, expected %d",
                    j.nonce().length, Handshake.NONCE_BYTES);
        }
        byte[] nonce = handshake.nonce();
        if (!channel.offer(FrameCodec.encode(new Frame.Challenge(nonce), maxFrameBytes))) {
            return channel.peer() + " does not take rank 0's challenge";
        }
        join = j;
        rootNonce = nonce;
        return null;
    }
}

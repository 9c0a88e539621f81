package dev.irisjvm.core.rendezvous;

/**
 * One message of the rendezvous protocol, already decoded. {@link FrameCodec} owns the bytes;
 * these records only carry values.
 */
sealed interface Frame permits Frame.Join, Frame.Challenge, Frame.Proof, Frame.Accept, Frame.Welcome,
        Frame.Request, Frame.Result, Frame.Failure {

    /** How the frame reads in an error message. */
    String describe();

    /**
     * First frame from a rank to rank 0: who it claims to be, and its half of the handshake's
     * nonces (see {@link Handshake}). It carries no secret.
     */
    record Join(int magic, int version, int rank, int worldSize, byte[] nonce) implements Frame {
        @Override
        public String describe() {
            return "join frame";
        }
    }

    /** Rank 0's answer to a join: its half of the nonces. */
    record Challenge(byte[] nonce) implements Frame {
        @Override
        public String describe() {
            return "challenge frame";
        }
    }

    /** The member's proof that it holds the job's secret. */
    record Proof(byte[] proof) implements Frame {
        @Override
        public String describe() {
            return "proof frame";
        }
    }

    /** Rank 0 admits the member, with its own proof that it holds the secret. */
    record Accept(byte[] proof) implements Frame {
        @Override
        public String describe() {
            return "accept frame";
        }
    }

    /** Rank 0 to every member once all ranks have joined. */
    record Welcome() implements Frame {
        @Override
        public String describe() {
            return "welcome frame";
        }
    }

    /**
     * A member's contribution to one collective step. {@code root} only matters for a
     * broadcast and is 0 otherwise; {@code payload} is empty for a barrier.
     */
    record Request(long step, Collective op, int root, byte[] payload) implements Frame {
        @Override
        public String describe() {
            return "request for " + op.describe(step, root);
        }
    }

    /**
     * Rank 0's answer to a step: every rank's payload for an allGather, the root's payload
     * alone for a broadcast, nothing for a barrier.
     */
    record Result(long step, Collective op, byte[][] payloads) implements Frame {
        @Override
        public String describe() {
            return "result for step " + step + " (" + op.label() + ")";
        }
    }

    /**
     * Rank 0 gave up: sent to every member so that they fail at once with rank 0's reason
     * instead of waiting out their own timeout. {@code timeout} keeps the exception type.
     */
    record Failure(boolean timeout, String message) implements Frame {
        @Override
        public String describe() {
            return "failure notice";
        }
    }
}

package dev.irisjvm.core.rendezvous;

/** The collective operations a rendezvous step can be; the code is what travels on the wire. */
enum Collective {
    BARRIER((byte) 1, "barrier"),
    ALL_GATHER((byte) 2, "allGather"),
    BROADCAST((byte) 3, "broadcast");

    final byte code;
    private final String label;

    Collective(byte code, String label) {
        this.code = code;
        this.label = label;
    }

    /** Null for an unknown code, so that the decoder can say which frame carried it. */
    static Collective fromCode(byte code) {
        for (Collective c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }

    /** The name callers know the operation by, e.g. {@code allGather}. */
    String label() {
        return label;
    }

    /**
     * How a step reads in messages, e.g. {@code step 5 (allGather)}; a broadcast names its root
     * because two ranks disagreeing on the root is as fatal as disagreeing on the operation.
     */
    String describe(long step, int root) {
        return this == BROADCAST
                ? "step " + step + " (broadcast from rank " + root + ")"
                : "step " + step + " (" + label + ")";
    }
}

package dev.irisjvm.kernels.ccl;

/**
 * Wait sites of the collective kernels (ccl_common.cuh): a device timeout's message says "wait site
 * N", and {@link #describe(int)} turns N into the collective and the wait. A site is the
 * collective's base plus the wait's offset, e.g. 7302 = ring all-reduce waiting for its
 * predecessor's data.
 */
public final class CclSites {
    public static final int ALL_REDUCE_ONE_SHOT = 7100;
    public static final int ALL_REDUCE_TWO_SHOT = 7200;
    public static final int ALL_REDUCE_RING = 7300;
    public static final int ALL_REDUCE_ATOMIC = 7400;
    public static final int ALL_GATHER = 7500;
    public static final int REDUCE_SCATTER = 7600;
    public static final int BROADCAST = 7700;
    public static final int ALL_TO_ALL = 7800;
    public static final int ALL_TO_ALL_V = 7900;

    /** A peer's arrival in this call (entry). */
    public static final int WAIT_ARRIVE = 1;
    /** A peer's data flag, first phase. */
    public static final int WAIT_DATA = 2;
    /** A peer's data flag, second phase. */
    public static final int WAIT_DATA_2 = 3;
    /** A peer's acknowledgement (ring). */
    public static final int WAIT_ACK = 4;
    /** all-to-all-v: a send count disagrees with the receiver's count (device error code 3). */
    public static final int COUNT_MISMATCH = 8;
    /** The exit check that every peer arrived in this call. */
    public static final int WAIT_EXIT = 9;

    /** DeviceStatus code of a count mismatch (1 and 2 are the timeouts of ctx.cuh). */
    public static final int ERROR_COUNT_MISMATCH = 3;

    private CclSites() {}

    /** "ring all-reduce: waiting for a peer's data (second phase)", or null for a site that is not a collective's. */
    public static String describe(int site) {
        String collective = switch (site / 100 * 100) {
            case ALL_REDUCE_ONE_SHOT -> "one-shot all-reduce";
            case ALL_REDUCE_TWO_SHOT -> "two-shot all-reduce";
            case ALL_REDUCE_RING -> "ring all-reduce";
            case ALL_REDUCE_ATOMIC -> "atomic all-reduce";
            case ALL_GATHER -> "all-gather";
            case REDUCE_SCATTER -> "reduce-scatter";
            case BROADCAST -> "broadcast";
            case ALL_TO_ALL -> "all-to-all";
            case ALL_TO_ALL_V -> "all-to-all-v";
            default -> null;
        };
        String wait = switch (site % 100) {
            case WAIT_ARRIVE -> "waiting for a peer to arrive";
            case WAIT_DATA -> "waiting for a peer's data";
            case WAIT_DATA_2 -> "waiting for a peer's data (second phase)";
            case WAIT_ACK -> "waiting for a peer's acknowledgement";
            case COUNT_MISMATCH -> "a send count differs from the receiving peer's count (observed: the peer's "
                    + "receive count, expected: this rank's send count)";
            case WAIT_EXIT -> "checking at exit that every peer arrived";
            default -> null;
        };
        return collective == null || wait == null ? null : collective + ": " + wait;
    }
}

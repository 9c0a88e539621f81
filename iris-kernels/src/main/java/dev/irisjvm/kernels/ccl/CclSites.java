package dev.irisjvm.kernels.ccl;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Wait sites of the collective kernels (ccl_common.cuh): a device timeout's message says "wait site
 * N", and {@link #describe(int)} turns N into the collective and the wait. A site is the
 * collective's base plus the wait's offset, e.g. 7302 = ring all-reduce waiting for its
 * predecessor's data.
 */
public final class CclSites {
    public static final int ALL_REDUCE_ONE_SHOT = KernelAbi.IRIS_CCL_SITE_ALL_REDUCE_ONE_SHOT;
    public static final int ALL_REDUCE_TWO_SHOT = KernelAbi.IRIS_CCL_SITE_ALL_REDUCE_TWO_SHOT;
    public static final int ALL_REDUCE_RING = KernelAbi.IRIS_CCL_SITE_ALL_REDUCE_RING;
    public static final int ALL_REDUCE_ATOMIC = KernelAbi.IRIS_CCL_SITE_ALL_REDUCE_ATOMIC;
    public static final int ALL_GATHER = KernelAbi.IRIS_CCL_SITE_ALL_GATHER;
    public static final int REDUCE_SCATTER = KernelAbi.IRIS_CCL_SITE_REDUCE_SCATTER;
    public static final int BROADCAST = KernelAbi.IRIS_CCL_SITE_BROADCAST;
    public static final int ALL_TO_ALL = KernelAbi.IRIS_CCL_SITE_ALL_TO_ALL;
    public static final int ALL_TO_ALL_V = KernelAbi.IRIS_CCL_SITE_ALL_TO_ALL_V;

    /** A peer's arrival in this call (entry). */
    public static final int WAIT_ARRIVE = KernelAbi.IRIS_CCL_WAIT_ARRIVE;
    /** A peer's data flag, first phase. */
    public static final int WAIT_DATA = KernelAbi.IRIS_CCL_WAIT_DATA;
    /** A peer's data flag, second phase. */
    public static final int WAIT_DATA_2 = KernelAbi.IRIS_CCL_WAIT_DATA_2;
    /** A peer's acknowledgement (ring). */
    public static final int WAIT_ACK = KernelAbi.IRIS_CCL_WAIT_ACK;
    /** all-to-all-v: a send count disagrees with the receiver's count (device error code 3). */
    public static final int COUNT_MISMATCH = KernelAbi.IRIS_CCL_COUNT_MISMATCH;
    /** The exit check that every peer arrived in this call. */
    public static final int WAIT_EXIT = KernelAbi.IRIS_CCL_WAIT_EXIT;

    /** DeviceStatus code of a count mismatch (1 and 2 are the timeouts of ctx.cuh). */
    public static final int ERROR_COUNT_MISMATCH = KernelAbi.IRIS_ERROR_CODE_COUNT_MISMATCH;

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

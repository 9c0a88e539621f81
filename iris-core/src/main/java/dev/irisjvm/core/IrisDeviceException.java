package dev.irisjvm.core;

/**
 * A kernel recorded a failure on the device, e.g. a bounded wait that passed its deadline because
 * a peer never arrived. The facts come from the rank's device status record. Raised where the rank
 * reads its status: {@link Iris#synchronize()}, {@link Iris#checkDeviceStatus()} and {@link
 * Iris#close()}.
 *
 * <pre>{@code
 * try {
 *     iris.synchronize();
 * } catch (IrisDeviceException e) {
 *     log.error("rank {}: device error {} waiting for rank {}: {}", iris.rank(), e.code(), e.peer(), e.getMessage());
 *     throw e;   // the rank's collectives cannot go on: leave the job
 * }
 * }</pre>
 */
public class IrisDeviceException extends IrisException {
    private final int code;
    private final int peer;

    public IrisDeviceException(String message, int code, int peer) {
        super(message);
        this.code = code;
        this.peer = peer;
    }

    /**
     * The device error code: 1 a wait timed out, 2 a barrier timed out, 3 a collective's counts
     * disagree (iris-kernels), 5 checked mode: an address outside the heap or the ranks, 6 a kernel
     * refused its launch; kernel families' checks from 16 (iris-kernels' MoE dispatch: 16 an expert
     * over its capacity, 17 an expert id out of range). (4, a wait aborted because a rank was lost,
     * is raised as {@link IrisRankLostException}.)
     */
    public int code() {
        return code;
    }

    /** The rank that was waited for (code 5: the target rank of the bad address), or -1. */
    public int peer() {
        return peer;
    }
}

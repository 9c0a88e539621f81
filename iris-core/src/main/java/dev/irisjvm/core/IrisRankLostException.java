package dev.irisjvm.core;

/**
 * Another rank of the job is gone: its process ended, crashed or was killed, or it stopped
 * answering the watchdog's heartbeats. Raised by every operation that needs the other ranks
 * (synchronize after a device wait the loss cut short, barriers, host-side collectives) once the
 * watchdog has noticed; the Iris instance cannot be used for collective work after it, only
 * closed. The message names this rank, the lost rank and how the loss was noticed.
 *
 * <pre>{@code
 * try {
 *     iris.synchronize();
 * } catch (IrisRankLostException e) {
 *     log.error("rank {} lost rank {}", e.rank(), e.lostRank());   // then shut down
 * }
 * }</pre>
 */
public class IrisRankLostException extends IrisException {
    private final int rank;
    private final int lostRank;

    public IrisRankLostException(String message, int rank, int lostRank) {
        super(message);
        this.rank = rank;
        this.lostRank = lostRank;
    }

    public IrisRankLostException(String message, int rank, int lostRank, Throwable cause) {
        super(message, cause);
        this.rank = rank;
        this.lostRank = lostRank;
    }

    /** The rank that raised it. */
    public int rank() {
        return rank;
    }

    /** The rank that is gone. */
    public int lostRank() {
        return lostRank;
    }
}

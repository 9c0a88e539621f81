package dev.irisjvm.launch;

import java.util.List;
import java.util.Objects;

/**
 * How a launch ended.
 *
 * <pre>{@code
 * LaunchResult r = Launcher.run(LaunchOptions.of(2, "./train"), System.out::println);
 * if (!r.succeeded()) {
 *     System.err.println("rank " + r.failedRank() + " failed first with " + r.failedRankExitCode());
 * }
 * }</pre>
 *
 * <p>Exit codes are as Java reports them: a process killed by signal N shows as 128+N, the
 * way a shell reports it (137 for SIGKILL, 143 for SIGTERM).
 *
 * @param exitCode           the launcher's own exit code: 0 when every rank exited 0; the
 *                           exit code of the rank that failed first; 124 on timeout; 127 when
 *                           a rank could not be started; 130 when interrupted
 * @param failedRank         the rank that failed first, or {@link #NO_RANK}
 * @param failedRankExitCode that rank's exit code (127 if it could not start), or 0 if none failed
 * @param rankExitCodes      each rank's exit code, by rank ({@link #NOT_STARTED} for a rank never
 *                           started); empty after a dry run
 * @param stoppedRanks       the ranks the launcher stopped because another failed, the timeout
 *                           passed or it was interrupted, ascending
 * @param timedOut           whether the job ran past its {@code --timeout}
 */
public record LaunchResult(
        int exitCode,
        int failedRank,
        int failedRankExitCode,
        List<Integer> rankExitCodes,
        List<Integer> stoppedRanks,
        boolean timedOut) {

    /** {@link #failedRank()} when no rank failed. */
    public static final int NO_RANK = -1;
    /** An entry of {@link #rankExitCodes()} for a rank that was never started. */
    public static final int NOT_STARTED = -1;

    /** Copies the lists, so a result stays as it was reported. */
    public LaunchResult {
        rankExitCodes = List.copyOf(Objects.requireNonNull(rankExitCodes, "rankExitCodes"));
        stoppedRanks = List.copyOf(Objects.requireNonNull(stoppedRanks, "stoppedRanks"));
    }

    /** True when the launcher's exit code is 0: every rank exited 0, or it was a dry run. */
    public boolean succeeded() {
        return exitCode == 0;
    }
}

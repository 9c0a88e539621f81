package dev.irisjvm.kernels.fault;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.launch.LaunchResult;
import dev.irisjvm.core.testing.GpuTestSupport;
import dev.irisjvm.core.testing.MultiRankJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A rank killed with SIGKILL during a device barrier, an all-reduce and a kernel that waits on its
 * peers (the last rank, and rank 0, which hosts the rendezvous), one that throws between two
 * calls, or one stopped with SIGSTOP inside a
 * collective, a fused kernel and ring attention: every other rank raises
 * IrisRankLostException naming it within seconds, with no kernel left running, and ends by
 * itself; the launcher reports the killed rank as the first failure and exits 137. One job per
 * case, {@link RankLossScenarios} on every rank.
 */
@Tag("gpu")
class RankLossGpuTest {
    private static final int TAIL = 60;

    @ParameterizedTest(name = "{0}, rank {1} ends by {2} (-1: the last rank)")
    @CsvSource({"barrier, -1, KILL", "barrier, 0, KILL", "all_reduce, -1, KILL", "all_reduce, 0, KILL",
            "fused_all_reduce, -1, KILL", "fused_all_reduce, 0, KILL", "peer_flag_kernel, -1, KILL", "peer_flag_kernel, 0, KILL",
            "all_reduce, -1, THROW", "fused_all_reduce, 0, THROW"})
    void everyOtherRankNamesTheLostRankAndTheJobStops(String op, int victimSpec, String signal) {
        GpuTestSupport.assumeGpus(1);
        int world = GpuTestSupport.worldSize();
        int victim = Math.floorMod(victimSpec, world);
        MultiRankJob job = MultiRankJob.run(world, Duration.ofMinutes(3), o -> o.withStopDelay(Duration.ofSeconds(60)),
                RankLossScenarios.class, op, Integer.toString(victim), signal);
        int exitCode = signal.equals("KILL") ? 137 : 1;  // SIGKILL, or the JVM's exit on an uncaught exception
        LaunchResult r = job.result();
        String tail = "\n--- output tail ---\n" + job.tail(TAIL);
        assertFalse(r.timedOut(), "the job ran past its limit" + tail);
        assertEquals(victim, r.failedRank(), "the rank that failed first" + tail);
        assertEquals(exitCode, r.failedRankExitCode(), "the victim's exit code" + tail);
        assertEquals(exitCode, r.exitCode(), "the launcher exits with the first failure's code" + tail);
        assertEquals(List.of(), r.stoppedRanks(), "the other ranks should have ended by themselves" + tail);
        assertTrue(job.output().stream().anyMatch(l -> l.startsWith("iris-run: rank " + victim + " failed first with exit code " + exitCode)),
                "the launcher names the rank that failed first" + tail);
        List<String> problems = survivorProblems(job, r, world, victim, "rank_loss_" + op);
        assertTrue(problems.isEmpty(), String.join("\n", problems) + tail);
    }

    /**
     * A rank stopped with SIGSTOP (hung, its sockets open) inside a collective, a fused kernel and
     * ring attention: every other rank raises IrisRankLostException naming it once the watchdog
     * hears nothing from it, and ends by itself; the victim, continued long after, ends with
     * {@value RankLossScenarios#RESUMED_EXIT_CODE}, which the launcher reports.
     */
    @ParameterizedTest(name = "{0}, rank {1} stopped (-1: the last rank)")
    @CsvSource({"all_reduce, -1", "all_reduce, 0", "fused_all_reduce, -1", "ring_attention, -1", "ring_attention, 0"})
    void everyOtherRankNamesTheStoppedRankAndEnds(String op, int victimSpec) {
        GpuTestSupport.assumeGpus(1);
        int world = GpuTestSupport.worldSize();
        int victim = Math.floorMod(victimSpec, world);
        MultiRankJob job = MultiRankJob.run(world, Duration.ofMinutes(3), o -> o.withStopDelay(Duration.ofSeconds(60)),
                RankLossScenarios.class, op, Integer.toString(victim), "STOP");
        LaunchResult r = job.result();
        String tail = "\n--- output tail ---\n" + job.tail(TAIL);
        assertFalse(r.timedOut(), "the job ran past its limit" + tail);
        assertEquals(victim, r.failedRank(), "the stopped rank, once continued, ends the job" + tail);
        assertEquals(RankLossScenarios.RESUMED_EXIT_CODE, r.failedRankExitCode(), "the victim's exit code" + tail);
        assertEquals(List.of(), r.stoppedRanks(), "the other ranks should have ended by themselves" + tail);
        List<String> problems = survivorProblems(job, r, world, victim, "rank_loss_" + op + "_stopped");
        assertTrue(problems.isEmpty(), String.join("\n", problems) + tail);
    }

    /** Each survivor reported one passing outcome of the scenario and exited 0. */
    private static List<String> survivorProblems(MultiRankJob job, LaunchResult r, int world, int victim, String scenario) {
        List<String> problems = new ArrayList<>();
        List<MultiRankJob.Outcome> outcomes = job.outcomes().getOrDefault(scenario, List.of());
        for (int rank = 0; rank < world; rank++) {
            if (rank == victim) continue;
            int rr = rank;
            List<MultiRankJob.Outcome> mine = outcomes.stream().filter(o -> o.rank() == rr).toList();
            if (mine.size() != 1) {
                problems.add("rank " + rank + ": " + mine.size() + " results");
            } else if (!mine.get(0).passed()) {
                problems.add("rank " + rank + ": FAIL " + mine.get(0).detail());
            }
            if (r.rankExitCodes().get(rank) != 0) {
                problems.add("rank " + rank + " exited with " + r.rankExitCodes().get(rank));
            }
        }
        return problems;
    }
}

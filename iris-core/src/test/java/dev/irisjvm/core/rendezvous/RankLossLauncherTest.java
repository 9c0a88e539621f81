package dev.irisjvm.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.launch.LaunchOptions;
import dev.irisjvm.launch.LaunchResult;
import dev.irisjvm.launch.Launcher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rank killed with SIGKILL, with real processes and no GPU: three JVMs of {@link RankLossProbe}
 * through the launcher. Every other rank's watchdog names the dead rank within a few seconds
 * (far below its 10 s timeout: the dead process's connection closes at once), rank 0's death
 * included; the launcher reports the killed rank as the first failure, exits with its code (137),
 * and has nobody left to stop, because the others finished by themselves within the stop delay.
 */
@Timeout(120)
class RankLossLauncherTest {
    private static final Pattern LOST = Pattern.compile("^\\[(\\d+)\\] LOST (\\d+) (\\d+) (.*)$");

    @ParameterizedTest(name = "rank {0} killed")
    @ValueSource(ints = {2, 0})
    void everyOtherRankNamesTheKilledRankAndTheLauncherReportsIt(int victim) {
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), RankLossProbe.class.getName(), Integer.toString(victim));
        LaunchResult result = Launcher.run(LaunchOptions.of(3, command).withTimeout(Duration.ofSeconds(90))
                .withStopDelay(Duration.ofSeconds(30)), lines::add);
        String output = String.join("\n", lines);

        assertEquals(victim, result.failedRank(), output);
        assertEquals(137, result.failedRankExitCode(), "SIGKILL; " + output);
        assertEquals(137, result.exitCode(), output);
        assertEquals(List.of(), result.stoppedRanks(), "the others should have ended by themselves; " + output);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("iris-run: rank " + victim + " failed first with exit code 137")),
                output);
        for (int r = 0; r < 3; r++) {
            if (r == victim) continue;
            assertEquals(0, result.rankExitCodes().get(r), "rank " + r + "; " + output);
            int rank = r;
            Matcher m = lines.stream().map(LOST::matcher).filter(x -> x.matches() && Integer.parseInt(x.group(1)) == rank)
                    .findFirst().orElseThrow(() -> new AssertionError("rank " + rank + " reported no loss; " + output));
            assertEquals(victim, Integer.parseInt(m.group(2)), "lost rank seen by rank " + r);
            long millis = Long.parseLong(m.group(3));
            assertTrue(millis < 5000, "rank " + r + " took " + millis + " ms (watchdog timeout 10 s)");
            assertTrue(m.group(4).contains("rank " + victim + " was lost: its watchdog connection closed without a goodbye"),
                    m.group(4));
        }
    }
}

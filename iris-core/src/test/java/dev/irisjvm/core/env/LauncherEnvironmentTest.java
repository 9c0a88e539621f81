package dev.irisjvm.core.env;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.launch.LaunchOptions;
import dev.irisjvm.launch.LaunchResult;
import dev.irisjvm.launch.Launcher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The launcher (iris-launch) and {@link RankEnvironment} name the same variables on two sides of a
 * process boundary: what the launcher's dry run shows for a rank reads back as that rank's place in
 * the job.
 */
class LauncherEnvironmentTest {

    @Test
    void whatTheLauncherSetsReadsBackAsTheSamePlaceInTheJob() {
        List<String> lines = new ArrayList<>();
        LaunchResult result = Launcher.run(LaunchOptions.of(4, "./train").withMasterAddr("gpu03").withMasterPort(29600)
                .withDryRun(true), lines::add);
        assertEquals(0, result.exitCode(), String.join("\n", lines));

        Map<String, String> rank1 = variables(lines.get(1));
        String token = rank1.get("IRIS_JOB_TOKEN");  // the job's own, new for each run
        assertEquals(32, token.length(), lines.get(1));
        assertEquals(new RankEnvironment(1, 4, 1, 4, 0, 1, "gpu03", 29600, token, "IRIS"),
                RankEnvironment.fromEnvironment(rank1));
    }

    /** "[1] IRIS_RANK=1 IRIS_WORLD_SIZE=4 ... -- ./train" as a map of its variables. */
    private static Map<String, String> variables(String dryRunLine) {
        Map<String, String> env = new HashMap<>();
        for (String word : dryRunLine.substring(dryRunLine.indexOf(']') + 2, dryRunLine.indexOf(" -- ")).split(" ")) {
            int eq = word.indexOf('=');
            env.put(word.substring(0, eq), word.substring(eq + 1));
        }
        return env;
    }
}

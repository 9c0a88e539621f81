package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.irisjvm.core.launch.LaunchResult;
import dev.irisjvm.core.testing.GpuTestSupport;
import dev.irisjvm.core.testing.MultiRankJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The device API from user kernels on a real multi-GPU job: {@link DeviceApiScenarios} runs on
 * every rank (one child JVM per GPU, started once), and each scenario becomes one dynamic test
 * that passes only if every rank reported PASS for it. Two more tests make a crash visible: the
 * job must exit 0, and every expected scenario name must have been reported (a rank that died
 * before a scenario leaves it unreported, which fails here instead of passing silently).
 */
@Tag("gpu")
class DeviceApiGpuTest {
    private static final int TAIL_LINES = 80;

    @TestFactory
    Stream<DynamicTest> deviceApi() {
        GpuTestSupport.assumeGpus(2);
        int world = GpuTestSupport.worldSize();
        MultiRankJob job = MultiRankJob.run(world, Duration.ofMinutes(4), DeviceApiScenarios.class);
        List<DynamicTest> tests = new ArrayList<>();

        tests.add(dynamicTest("job exited 0 on " + world + " ranks", () -> {
            LaunchResult r = job.result();
            assertFalse(r.timedOut(), "job ran past its 4 minute limit; output tail:\n" + job.tail(TAIL_LINES));
            assertEquals(0, r.exitCode(), "job exit code (a rank's exit code is its number of failed scenarios); rank exit codes "
                    + r.rankExitCodes() + ", first failed rank " + r.failedRank() + "; output tail:\n" + job.tail(TAIL_LINES));
        }));

        tests.add(dynamicTest("every scenario reported", () -> {
            TreeSet<String> expected = new TreeSet<>(DeviceApiScenarios.SCENARIOS);
            TreeSet<String> reported = new TreeSet<>(job.outcomes().keySet());
            TreeSet<String> missing = new TreeSet<>(expected);
            missing.removeAll(reported);
            TreeSet<String> unexpected = new TreeSet<>(reported);
            unexpected.removeAll(expected);
            assertEquals(expected, reported, "scenarios never reported: " + missing + ", unexpected: " + unexpected
                    + "; output tail:\n" + job.tail(TAIL_LINES));
        }));

        for (String name : DeviceApiScenarios.SCENARIOS) {
            tests.add(dynamicTest(name, () -> {
                List<MultiRankJob.Outcome> outcomes = job.outcomes().getOrDefault(name, List.of());
                Map<Integer, List<MultiRankJob.Outcome>> byRank = new TreeMap<>(
                        outcomes.stream().collect(Collectors.groupingBy(MultiRankJob.Outcome::rank)));
                List<String> problems = new ArrayList<>();
                for (int r = 0; r < world; r++) {
                    List<MultiRankJob.Outcome> mine = byRank.getOrDefault(r, List.of());
                    if (mine.isEmpty()) {
                        problems.add("rank " + r + ": no result (crashed or stopped before this scenario?)");
                    } else if (mine.size() > 1) {
                        problems.add("rank " + r + ": reported " + mine.size() + " results");
                    }
                    for (MultiRankJob.Outcome o : mine) {
                        if (!o.passed()) {
                            problems.add("rank " + r + ": FAIL " + o.detail());
                        }
                    }
                }
                for (Integer r : byRank.keySet()) {
                    if (r < 0 || r >= world) {
                        problems.add("rank " + r + " is outside the world of " + world);
                    }
                }
                assertTrue(problems.isEmpty(), name + " failed:\n" + String.join("\n", problems)
                        + "\n--- output tail ---\n" + job.tail(TAIL_LINES));
            }));
        }
        return tests.stream();
    }
}

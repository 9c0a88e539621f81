package dev.irisjvm.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.irisjvm.core.testing.GpuTestSupport;
import dev.irisjvm.core.testing.MultiRankJob;
import dev.irisjvm.core.testing.ScenarioSuite;
import dev.irisjvm.launch.LaunchResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Every numbered example as a job of its own, one JVM per rank through the launcher, on two ranks
 * and on the GPU tests' world ({@code IRIS_TEST_WORLD}, run-gpu-tests' {@code --world}; default:
 * the GPUs, at least 2) where that differs: each rank must exit 0 and print its one
 * {@code rank r ...: OK} line (Example00: rank 1 only, the rank that checks). Example07 must also
 * have printed the checked-mode report naming the line of its kernel's store. Then the launch
 * checks of {@link KernelLaunchScenarios}.
 */
@Tag("gpu")
class ExamplesGpuTest {
    private static final Duration LIMIT = Duration.ofMinutes(3);
    private static final Pattern OK = Pattern.compile("^\\[(\\d+)\\] rank (\\d+) .*: OK$");
    private static final int TAIL_LINES = 60;

    /** An example and the ranks that print an OK line. */
    private record Example(Class<?> main, IntPredicate printsOk) {}

    private static final List<Example> EXAMPLES = List.of(
            new Example(Example00HelloWorld.class, r -> r == 1),
            new Example(Example01Load.class, r -> true),
            new Example(Example02Store.class, r -> true),
            new Example(Example03GetPutCopy.class, r -> true),
            new Example(Example04Atomics.class, r -> true),
            new Example(Example05MessagePassing.class, r -> true),
            new Example(Example06AllReduce.class, r -> true),
            new Example(Example07CheckedMode.class, r -> true),
            new Example(Example08GemmAllScatter.class, r -> true),
            new Example(Example09CublasInterop.class, r -> true),
            new Example(Example10OverlapStyles.class, r -> true),
            new Example(Example11TrainingStep.class, r -> true));

    @TestFactory
    Stream<DynamicTest> examples() {
        return worlds().flatMap(world -> EXAMPLES.stream().map(e -> dynamicTest(
                e.main().getSimpleName() + " on " + world + " ranks", () -> run(e, world))));
    }

    @TestFactory
    Stream<DynamicTest> launchChecks() {
        return new ScenarioSuite(KernelLaunchScenarios.class, KernelLaunchScenarios.SCENARIOS, LIMIT).tests();
    }

    /** 2, and the GPU tests' world where it is another (worlds below 2 are left out: every example needs a peer). */
    private static Stream<Integer> worlds() {
        return IntStream.of(2, GpuTestSupport.worldSize()).filter(w -> w >= 2).distinct().boxed();
    }

    private static void run(Example example, int world) {
        GpuTestSupport.assumeGpus(1);
        MultiRankJob job = MultiRankJob.run(world, LIMIT, example.main());
        String name = example.main().getSimpleName() + " on " + world + " ranks";
        LaunchResult r = job.result();
        assertFalse(r.timedOut(), name + " ran past " + LIMIT.toSeconds() + " s; output tail:\n" + job.tail(TAIL_LINES));
        assertEquals(0, r.exitCode(), name + ": rank exit codes " + r.rankExitCodes() + ", first failed rank "
                + r.failedRank() + "; output tail:\n" + job.tail(TAIL_LINES));

        List<String> problems = new ArrayList<>();
        for (int rank = 0; rank < world; rank++) {
            List<String> oks = okLines(job.output(), rank);
            int expected = example.printsOk().test(rank) ? 1 : 0;
            if (oks.size() != expected) {
                problems.add("rank " + rank + " printed " + oks.size() + " OK line(s), expected " + expected + ": " + oks);
            }
        }
        if (example.main() == Example07CheckedMode.class) {
            // The example checks that the line is the one its kernel reported for the store.
            for (int rank = 0; rank < world; rank++) {
                Pattern report = Pattern.compile("\\[" + rank + "] rank " + rank
                        + ": checked mode: out_of_heap \\(07_checked_mode\\.cu:\\d+\\) ");
                if (job.output().stream().noneMatch(l -> report.matcher(l).lookingAt())) {
                    problems.add("rank " + rank + " printed no report matching '" + report + "'");
                }
            }
        }
        assertTrue(problems.isEmpty(), name + ":\n" + String.join("\n", problems) + "\n--- output tail ---\n"
                + job.tail(TAIL_LINES));
    }

    /** The lines {@code [rank] rank <rank> ...: OK}; a line whose two ranks differ counts for neither. */
    private static List<String> okLines(List<String> output, int rank) {
        List<String> found = new ArrayList<>();
        for (String line : output) {
            Matcher m = OK.matcher(line);
            if (m.matches() && Integer.parseInt(m.group(1)) == rank && Integer.parseInt(m.group(2)) == rank) {
                found.add(line);
            }
        }
        return found;
    }
}

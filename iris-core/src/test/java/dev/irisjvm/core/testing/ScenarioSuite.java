package dev.irisjvm.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.irisjvm.launch.LaunchResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;

/**
 * A multi-rank scenario job seen as JUnit tests: the job (one child JVM per GPU, through the
 * launcher) starts once, with the first test that needs it, and each scenario becomes a dynamic
 * test that passes only if every rank reported PASS for it. Two more tests make a crash visible:
 * the job must exit 0, and every expected scenario must have been reported.
 *
 * <p>Each test checks for GPUs itself: Surefire does not count a test factory whose own assumption
 * failed, while skipped dynamic tests show up as skipped, with the reason.
 *
 * <pre>{@code
 * @TestFactory
 * Stream<DynamicTest> scenarios() {
 *     return new ScenarioSuite(MyScenarios.class, MyScenarios.SCENARIOS, Duration.ofMinutes(4)).tests();
 * }
 * }</pre>
 */
public final class ScenarioSuite {
    private static final int TAIL_LINES = 80;

    private final Class<?> mainClass;
    private final List<String> scenarios;
    private final Duration limit;
    private final Map<String, String> env;
    private final int simulatedNodes;   // 0: one node, the world from GpuTestSupport
    private final int ranksPerNode;
    private MultiRankJob job;
    private RuntimeException jobFailure;
    private int world;

    public ScenarioSuite(Class<?> mainClass, List<String> scenarios, Duration limit) {
        this(mainClass, scenarios, limit, Map.of());
    }

    /** With extra variables for every rank, e.g. {@code Map.of("IRIS_CHECK", "1")}. */
    public ScenarioSuite(Class<?> mainClass, List<String> scenarios, Duration limit, Map<String, String> env) {
        this(mainClass, scenarios, limit, env, 0, 0);
    }

    private ScenarioSuite(Class<?> mainClass, List<String> scenarios, Duration limit, Map<String, String> env,
                          int simulatedNodes, int ranksPerNode) {
        this.mainClass = mainClass;
        this.scenarios = List.copyOf(scenarios);
        this.limit = limit;
        this.env = Map.copyOf(env);
        this.simulatedNodes = simulatedNodes;
        this.ranksPerNode = ranksPerNode;
    }

    /**
     * The same suite as a job of {@code nodes} simulated nodes of {@code ranksPerNode} ranks each on
     * this host (bin/iris-run {@code --nnodes nodes --simulate-nodes}: a node id and an NCCL host id
     * per simulated node, ranks sharing the GPUs there are); test names start with the layout, e.g.
     * {@code "2x2 nodes: job exited 0"}.
     */
    public ScenarioSuite onSimulatedNodes(int nodes, int ranksPerNode) {
        if (nodes < 2 || ranksPerNode < 1) {
            throw new IllegalArgumentException("simulated nodes: nodes must be >= 2 and ranksPerNode >= 1, got " + nodes
                    + " x " + ranksPerNode);
        }
        return new ScenarioSuite(mainClass, scenarios, limit, env, nodes, ranksPerNode);
    }

    private synchronized MultiRankJob job() {
        if (job == null && jobFailure == null) {
            world = simulatedNodes > 0 ? simulatedNodes * ranksPerNode : GpuTestSupport.worldSize();
            try {
                UnaryOperator<dev.irisjvm.launch.LaunchOptions> withEnv = o -> env.isEmpty() ? o : o.withExtraEnv(env);
                job = simulatedNodes > 0
                        ? MultiRankJob.run(ranksPerNode, limit, o -> withEnv.apply(o).withSimulatedNodes(simulatedNodes), mainClass)
                        : MultiRankJob.run(world, limit, withEnv, mainClass);
            } catch (RuntimeException e) {
                jobFailure = e;  // every test reports it; the job is not started again
            }
        }
        if (jobFailure != null) {
            throw new AssertionError("the " + world + "-rank job could not be run: " + jobFailure, jobFailure);
        }
        return job;
    }

    @FunctionalInterface
    private interface JobCheck {
        void run(MultiRankJob job, int world);
    }

    private DynamicTest onGpus(String name, JobCheck check) {
        String shown = simulatedNodes > 0 ? simulatedNodes + "x" + ranksPerNode + " nodes: " + name : name;
        return dynamicTest(shown, () -> {
            GpuTestSupport.assumeGpus(1);
            MultiRankJob j = job();
            check.run(j, world);
        });
    }

    public Stream<DynamicTest> tests() {
        List<DynamicTest> tests = new ArrayList<>();
        tests.add(onGpus("job exited 0", (j, w) -> {
            LaunchResult r = j.result();
            assertFalse(r.timedOut(), "job of " + w + " ranks ran past its " + limit.toSeconds() + " s limit; output tail:\n"
                    + j.tail(TAIL_LINES));
            assertEquals(0, r.exitCode(), "job exit code on " + w + " ranks (a rank's exit code is its number of failed"
                    + " scenarios); rank exit codes " + r.rankExitCodes() + ", first failed rank " + r.failedRank()
                    + "; output tail:\n" + j.tail(TAIL_LINES));
        }));
        tests.add(onGpus("every scenario reported", (j, w) -> {
            TreeSet<String> expected = new TreeSet<>(scenarios);
            TreeSet<String> reported = new TreeSet<>(j.outcomes().keySet());
            TreeSet<String> missing = new TreeSet<>(expected);
            missing.removeAll(reported);
            TreeSet<String> unexpected = new TreeSet<>(reported);
            unexpected.removeAll(expected);
            assertEquals(expected, reported, "scenarios never reported: " + missing + ", unexpected: " + unexpected
                    + "; output tail:\n" + j.tail(TAIL_LINES));
        }));
        for (String name : scenarios) {
            tests.add(onGpus(name, (j, w) -> {
                Map<Integer, List<MultiRankJob.Outcome>> byRank = new TreeMap<>(j.outcomes().getOrDefault(name, List.of())
                        .stream().collect(Collectors.groupingBy(MultiRankJob.Outcome::rank)));
                List<String> problems = new ArrayList<>();
                for (int r = 0; r < w; r++) {
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
                byRank.keySet().stream().filter(r -> r < 0 || r >= w)
                        .forEach(r -> problems.add("rank " + r + " is outside the world of " + w));
                List<MultiRankJob.Outcome> skips = j.outcomes().getOrDefault(name, List.of()).stream()
                        .filter(MultiRankJob.Outcome::skipped).toList();
                if (problems.isEmpty() && !skips.isEmpty()) {
                    long skippedRanks = skips.stream().map(MultiRankJob.Outcome::rank).distinct().count();
                    if (skippedRanks != w) {
                        problems.add("skipped on " + skippedRanks + " of " + w + " ranks: a skip must be decided alike on every rank");
                    } else {
                        System.out.println("GPU test skipped: " + name + " on " + w + " ranks: " + skips.get(0).detail());
                        Assumptions.abort(name + " on " + w + " ranks: " + skips.get(0).detail());
                    }
                }
                assertTrue(problems.isEmpty(), name + " on " + w + " ranks failed:\n" + String.join("\n", problems)
                        + "\n--- output tail ---\n" + j.tail(TAIL_LINES));
            }));
        }
        return tests.stream();
    }
}

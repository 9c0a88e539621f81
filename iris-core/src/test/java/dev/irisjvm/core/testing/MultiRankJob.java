package dev.irisjvm.core.testing;

import dev.irisjvm.launch.LaunchOptions;
import dev.irisjvm.launch.LaunchResult;
import dev.irisjvm.launch.Launcher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs a scenario class as an N-rank job through the launcher (one child JVM per rank, the same
 * class path as this JVM) and collects what each rank reported with {@link ScenarioRunner}.
 */
public final class MultiRankJob {
    private static final Pattern RESULT = Pattern.compile("^\\[(\\d+)\\] SCENARIO (\\S+) (PASS|FAIL|SKIP)(?: (.*))?$");

    /** One scenario's outcome on one rank: status PASS, FAIL or SKIP (the detail then says why). */
    public record Outcome(int rank, String scenario, String status, String detail) {
        public boolean passed() {
            return !status.equals("FAIL");
        }

        public boolean skipped() {
            return status.equals("SKIP");
        }
    }

    private final LaunchResult result;
    private final List<String> output;
    private final Map<String, List<Outcome>> outcomes;

    private MultiRankJob(LaunchResult result, List<String> output, Map<String, List<Outcome>> outcomes) {
        this.result = result;
        this.output = output;
        this.outcomes = outcomes;
    }

    public static MultiRankJob run(int ranks, Duration limit, Class<?> mainClass, String... args) {
        return run(ranks, limit, UnaryOperator.identity(), mainClass, args);
    }

    /**
     * Like {@link #run(int, Duration, Class, String...)}, with the launch adjusted by {@code adjust},
     * e.g. {@code o -> o.withStopDelay(Duration.ofSeconds(20)).withExtraEnv(Map.of("IRIS_CHECK", "1"))}.
     */
    public static MultiRankJob run(int ranks, Duration limit, UnaryOperator<LaunchOptions> adjust, Class<?> mainClass,
                                   String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add("-Xmx" + rankHeapMiB(ranks) + "m");
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        LaunchResult r = Launcher.run(adjust.apply(LaunchOptions.of(ranks, command).withTimeout(limit)), line -> {
            lines.add(line);
            System.out.println(line);
        });
        Map<String, List<Outcome>> byScenario = new LinkedHashMap<>();
        synchronized (lines) {
            for (String line : lines) {
                Matcher m = RESULT.matcher(line);
                if (m.matches()) {
                    byScenario.computeIfAbsent(m.group(2), k -> new ArrayList<>()).add(new Outcome(
                            Integer.parseInt(m.group(1)), m.group(2), m.group(3), m.group(4)));
                }
            }
        }
        return new MultiRankJob(r, List.copyOf(lines), byScenario);
    }

    /**
     * Each rank's Java heap: half the machine's memory shared by the ranks, at most 16 GiB. Left
     * to the JVM, each of 8 ranks may take a quarter of the memory, and the kernel's OOM killer
     * then ends one with SIGKILL instead of the test failing with a message.
     */
    static long rankHeapMiB(int ranks) {
        long total = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize() >> 20;
        return Math.max(512, Math.min(16L << 10, total / 2 / Math.max(1, ranks)));
    }

    public LaunchResult result() {
        return result;
    }

    public List<String> output() {
        return output;
    }

    /** Scenario name to the outcomes every rank reported, in the order they were first seen. */
    public Map<String, List<Outcome>> outcomes() {
        return outcomes;
    }

    /** The last lines of output, for failure messages. */
    public String tail(int n) {
        return String.join("\n", output.subList(Math.max(0, output.size() - n), output.size()));
    }
}

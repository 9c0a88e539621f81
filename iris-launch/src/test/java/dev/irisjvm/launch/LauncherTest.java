package dev.irisjvm.launch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Starts real child processes (small shell commands); no GPU needed. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LauncherTest {

    @TempDir
    Path tmp;

    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());

    private LaunchResult launch(LaunchOptions options) {
        return Launcher.run(options, lines::add);
    }

    private static LaunchOptions sh(int ranks, String script) {
        return LaunchOptions.of(ranks, "sh", "-c", script);
    }

    @Test
    void dryRunPrintsEachRanksVariablesAndStartsNothing() throws Exception {
        Path marker = tmp.resolve("started");
        LaunchResult result = launch(sh(2, "touch " + marker).withDryRun(true).withMasterPort(12345));

        assertEquals(new LaunchResult(0, LaunchResult.NO_RANK, 0, List.of(), List.of(), false), result);
        assertEquals(2, lines.size(), lines::toString);
        for (int rank = 0; rank < 2; rank++) {
            String line = lines.get(rank);
            assertTrue(line.startsWith("[" + rank + "] IRIS_RANK=" + rank + " IRIS_WORLD_SIZE=2 IRIS_LOCAL_RANK=" + rank
                    + " IRIS_LOCAL_WORLD_SIZE=2 IRIS_NODE_RANK=0 IRIS_NODE_COUNT=1 IRIS_MASTER_ADDR=127.0.0.1"
                    + " IRIS_MASTER_PORT=12345 IRIS_JOB_TOKEN="), line);
            assertTrue(line.endsWith(" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1"
                    + " -- sh -c 'touch " + marker + "'"), line);
            assertFalse(line.contains("CUDA_VISIBLE_DEVICES"), line);
        }
        Thread.sleep(200);
        assertFalse(Files.exists(marker), "a dry run must start nothing");
    }

    @Test
    void ranksThatShareAGpuGetItsIndexAndAHostIdEachForNccl() {
        LaunchResult result = launch(sh(3, "true").withDryRun(true).withGpus(1));
        assertEquals(0, result.exitCode());
        assertTrue(lines.get(0).startsWith("iris-run: 3 ranks on 1 GPU (up to 3 per GPU"), lines.toString());
        for (int rank = 0; rank < 3; rank++) {
            String line = lines.get(rank + 1);
            assertTrue(line.contains(" IRIS_DEVICE=0 NCCL_HOSTID=iris-shared-gpu-rank-" + rank + " "), line);
        }
        Map<String, String> kept = Launcher.sharedGpuNcclEnv(1, Map.of("NCCL_HOSTID", "node-a"),
                Map.of("NCCL_SOCKET_IFNAME", "eth0"));
        assertEquals(Map.of("NCCL_IB_DISABLE", "1"), kept, "what the caller or the environment set is kept");
        assertEquals(Map.of("NCCL_HOSTID", "iris-shared-gpu-rank-2", "NCCL_SOCKET_IFNAME", "lo", "NCCL_IB_DISABLE", "1"),
                Launcher.sharedGpuNcclEnv(2, Map.of(), Map.of()));
    }

    @Test
    void ranksPerGpuPlacesRanksInBlocks() {
        LaunchResult result = launch(sh(4, "true").withDryRun(true).withRanksPerGpu(2));
        assertEquals(0, result.exitCode());
        List<String> ranks = lines.stream().filter(l -> l.startsWith("[")).toList();
        for (int rank = 0; rank < 4; rank++) {
            assertTrue(ranks.get(rank).contains(" IRIS_DEVICE=" + rank / 2 + " "), ranks.get(rank));
        }
    }

    @Test
    void oneRankPerGpuNeedsNoNcclHostIds() {
        launch(sh(2, "true").withDryRun(true).withGpus(2));
        assertEquals(2, lines.size(), lines::toString);
        for (int rank = 0; rank < 2; rank++) {
            assertTrue(lines.get(rank).contains(" IRIS_DEVICE=" + rank + " "), lines.get(rank));
            assertFalse(lines.get(rank).contains("NCCL_HOSTID"), lines.get(rank));
        }
    }

    @Test
    void dryRunThroughTheCommandLineExitsZero() {
        Captured c = execute("-n", "1", "--dry-run", "--", "echo", "it's");
        assertEquals(0, c.code);
        assertTrue(c.out.startsWith("[0] IRIS_RANK=0 IRIS_WORLD_SIZE=1 "), c.out);
        assertTrue(c.out.strip().endsWith("-- echo 'it'\\''s'"), c.out);
        assertEquals("", c.err);
    }

    @Test
    void ranksSeeTheirVariablesAndOutputIsPrefixed() {
        String script = "echo \"rank=$IRIS_RANK world=$IRIS_WORLD_SIZE local=$IRIS_LOCAL_RANK/$IRIS_LOCAL_WORLD_SIZE"
                + " addr=$IRIS_MASTER_ADDR port=$IRIS_MASTER_PORT token=$IRIS_JOB_TOKEN nvls=$NCCL_NVLS_ENABLE"
                + " symm=$TORCH_SYMM_MEM_DISABLE_MULTICAST nvshmem=$NVSHMEM_DISABLE_NVLS foo=$FOO"
                + " cvd=${CUDA_VISIBLE_DEVICES-unset}\"; echo \"on stderr $IRIS_RANK\" >&2";
        LaunchResult result = launch(sh(2, script).withExtraEnv(Map.of("FOO", "bar")));

        assertEquals(new LaunchResult(0, LaunchResult.NO_RANK, 0, List.of(0, 0), List.of(), false), result);
        Pattern p = Pattern.compile("\\[(\\d)] rank=(\\d) world=2 local=(\\d)/2 addr=127\\.0\\.0\\.1 port=(\\d+)"
                + " token=([0-9a-f]{32}) nvls=0 symm=1 nvshmem=1 foo=bar cvd=(.*)");
        Set<String> tokens = new java.util.HashSet<>();
        Set<String> ports = new java.util.HashSet<>();
        Set<String> ranks = new java.util.HashSet<>();
        String inheritedDevices = System.getenv().getOrDefault("CUDA_VISIBLE_DEVICES", "unset");
        for (String line : lines) {
            Matcher m = p.matcher(line);
            if (m.matches()) {
                assertEquals(m.group(1), m.group(2), "prefix must be the rank: " + line);
                assertEquals(m.group(1), m.group(3), line);
                assertNotEquals("0", m.group(4));
                assertEquals(inheritedDevices, m.group(6), "the launcher must not set CUDA_VISIBLE_DEVICES");
                ranks.add(m.group(1));
                ports.add(m.group(4));
                tokens.add(m.group(5));
            }
        }
        assertEquals(Set.of("0", "1"), ranks, lines::toString);
        assertEquals(1, tokens.size(), "one token per launch");
        assertEquals(1, ports.size(), "one master port per launch");
        assertTrue(lines.contains("[0] on stderr 0") && lines.contains("[1] on stderr 1"), lines::toString);
        assertEquals(4, lines.size(), lines::toString);
    }

    @Test
    void eachLaunchHasItsOwnToken() {
        launch(sh(1, "echo $IRIS_JOB_TOKEN"));
        launch(sh(1, "echo $IRIS_JOB_TOKEN"));
        assertEquals(2, lines.size());
        assertNotEquals(lines.get(0), lines.get(1));
    }

    @Test
    void linesFromDifferentRanksDoNotInterleave() {
        String script = "i=0; while [ $i -lt 300 ]; do echo \"r$IRIS_RANK-line$i-abcdefghijklmnopqrstuvwxyz\";"
                + " echo \"r$IRIS_RANK-err$i\" >&2; i=$((i+1)); done";
        assertEquals(0, launch(sh(3, script)).exitCode());
        Pattern p = Pattern.compile("\\[(\\d)] r\\1-(line\\d+-abcdefghijklmnopqrstuvwxyz|err\\d+)");
        for (String line : lines) {
            assertTrue(p.matcher(line).matches(), () -> "mangled line: " + line);
        }
        assertEquals(3 * 600, lines.size());
    }

    @Test
    void firstFailureStopsTheOtherRanksAndTheirChildren() throws Exception {
        Path pidFile = tmp.resolve("sleeper.pid");
        // Rank 0 sleeps in a child process; rank 1 fails once that child exists.
        String script = rankOneFailsOnceWritten("sleep 60 & echo $! > " + pidFile + "; wait", pidFile, 3);
        long start = System.nanoTime();
        LaunchResult result = launch(sh(2, script));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertTrue(took.compareTo(Duration.ofSeconds(8)) < 0, "took " + took);
        assertEquals(3, result.exitCode());
        assertEquals(1, result.failedRank());
        assertEquals(3, result.failedRankExitCode());
        assertEquals(List.of(0), result.stoppedRanks());
        assertEquals(3, result.rankExitCodes().get(1));
        assertEquals(143, result.rankExitCodes().get(0), "rank 0 ended by SIGTERM");
        assertTrue(lines.contains("iris-run: rank 1 failed first with exit code 3; stopped ranks [0]"), lines::toString);
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    @Test
    void detachedProcessOfAStoppedRankIsStoppedToo() throws Exception {
        Path pidFile = tmp.resolve("detached.pid");
        // The subshell exits at once, so its sleep is re-parented away from rank 0's tree.
        String script = rankOneFailsOnceWritten("(sleep 60 & echo $! > " + pidFile + "); sleep 60", pidFile, 4);
        LaunchResult result = launch(sh(2, script));

        assertEquals(4, result.exitCode());
        assertEquals(List.of(0), result.stoppedRanks());
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    @Test
    void rankKilledBySignalCountsAsFailure() {
        LaunchResult result = launch(sh(2, "if [ \"$IRIS_RANK\" = 0 ]; then kill -9 $$; else sleep 60; fi"));
        assertEquals(0, result.failedRank());
        assertEquals(137, result.failedRankExitCode(), "Java reports death by SIGKILL as 128+9");
        assertEquals(137, result.exitCode());
        assertEquals(List.of(1), result.stoppedRanks());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("iris-run: rank 0 failed first with exit code 137")
                && l.contains("signal 9")), lines::toString);
    }

    @Test
    void afterAFailureTheOtherRanksMayFinishOnTheirOwnWithinTheStopDelay() {
        // Rank 1 fails at once; rank 0 notices (here: simply takes a moment) and exits by itself.
        LaunchResult result = launch(sh(2, "if [ \"$IRIS_RANK\" = 1 ]; then exit 3; else sleep 0.5; echo noticed; exit 1; fi")
                .withStopDelay(Duration.ofSeconds(10)));
        assertEquals(3, result.exitCode(), "the first failure decides");
        assertEquals(1, result.failedRank());
        assertEquals(List.of(), result.stoppedRanks(), "nobody left to stop");
        assertEquals(1, result.rankExitCodes().get(0));
        assertTrue(lines.contains("[0] noticed"), lines::toString);
        assertTrue(lines.contains("iris-run: rank 1 failed with exit code 3; stopping the other ranks in 10 s unless they exit"
                + " first"), lines::toString);
        assertTrue(lines.contains("iris-run: rank 1 failed first with exit code 3; stopped ranks []"), lines::toString);
    }

    @Test
    void aZeroStopDelayStopsTheOthersAtOnce() {
        long start = System.nanoTime();
        LaunchResult result = launch(sh(2, "if [ \"$IRIS_RANK\" = 1 ]; then exit 3; else sleep 60; fi")
                .withStopDelay(Duration.ZERO));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(List.of(0), result.stoppedRanks());
        assertTrue(took.compareTo(Duration.ofMillis(1500)) < 0, "took " + took);
    }

    @Test
    void rankIgnoringSigtermIsKilledAfterTheGracePeriod() throws Exception {
        Path pidFile = tmp.resolve("stubborn.pid");
        String script = rankOneFailsOnceWritten("trap '' TERM; sleep 60 & echo $! > " + pidFile + "; wait", pidFile, 5);
        long start = System.nanoTime();
        LaunchResult result = launch(sh(2, script).withGracePeriod(Duration.ofMillis(300)));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(5, result.exitCode());
        assertEquals(1, result.failedRank());
        assertEquals(137, result.rankExitCodes().get(0), "SIGKILLed after ignoring SIGTERM");
        assertTrue(took.compareTo(Duration.ofSeconds(8)) < 0, "took " + took);
        assertGone(Long.parseLong(Files.readString(pidFile).trim()));
    }

    @Test
    void timeoutStopsEveryRank() {
        long start = System.nanoTime();
        LaunchResult result = launch(sh(2, "sleep 60").withTimeout(Duration.ofMillis(500)));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertEquals(Launcher.EXIT_TIMEOUT, result.exitCode());
        assertTrue(result.timedOut());
        assertEquals(LaunchResult.NO_RANK, result.failedRank());
        assertEquals(List.of(0, 1), result.stoppedRanks());
        assertTrue(took.compareTo(Duration.ofMillis(450)) > 0 && took.compareTo(Duration.ofSeconds(8)) < 0,
                "took " + took);
        assertTrue(lines.contains("iris-run: job ran past --timeout 0.5 s; stopped ranks still running [0, 1]"),
                lines::toString);
    }

    @Test
    void jobFinishingWithinTheTimeoutSucceeds() {
        LaunchResult result = launch(sh(2, "exit 0").withTimeout(Duration.ofSeconds(20)));
        assertEquals(0, result.exitCode());
        assertFalse(result.timedOut());
    }

    @Test
    void missingProgramIsReportedAsCannotStart() {
        LaunchResult result = launch(LaunchOptions.of(2, tmp.resolve("no-such-program").toString()));
        assertEquals(Launcher.EXIT_CANNOT_START, result.exitCode());
        assertEquals(0, result.failedRank());
        assertEquals(List.of(LaunchResult.NOT_STARTED, LaunchResult.NOT_STARTED), result.rankExitCodes());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("iris-run: rank 0 could not be started")), lines::toString);
    }

    @Test
    void usageErrorsExitTwoWithMessageAndUsage() {
        Captured c = execute("-n", "2", "--master-port", "http", "--", "x");
        assertEquals(Launcher.EXIT_USAGE, c.code);
        assertEquals("iris-run: --master-port expects a port number in 1..65535, got 'http'\n"
                + LaunchOptions.USAGE + "\n", c.err);
        assertEquals("", c.out);

        assertEquals(Launcher.EXIT_USAGE, execute("--", "x").code);
        assertEquals(0, execute("--help").code);
        assertTrue(execute("--help").out.startsWith(LaunchOptions.USAGE));
    }

    @Test
    void helpers() {
        assertEquals("abc-1.2/x=y", Launcher.shellQuote("abc-1.2/x=y"));
        assertEquals("'a b'", Launcher.shellQuote("a b"));
        assertEquals("''", Launcher.shellQuote(""));
        assertEquals("'$HOME'", Launcher.shellQuote("$HOME"));
        assertEquals("'it'\\''s'", Launcher.shellQuote("it's"));
        assertEquals("exit code 3", Launcher.describeExitCode(3));
        assertEquals("exit code 143, likely killed by signal 15 (SIGTERM)", Launcher.describeExitCode(143));
        assertEquals("1.5 s", Launcher.formatSeconds(Duration.ofMillis(1500)));
        assertEquals("60 s", Launcher.formatSeconds(Duration.ofSeconds(60)));
        assertTrue(Launcher.newJobToken().matches("[0-9a-f]{32}"));
        int port = Launcher.pickFreePort("127.0.0.1");
        assertTrue(port > 0 && port <= 65535);
    }

    /** Rank 0 runs {@code rankZero}, which writes {@code pidFile}; rank 1 exits with {@code code} once it is written (10 s at most). */
    private static String rankOneFailsOnceWritten(String rankZero, Path pidFile, int code) {
        return "if [ \"$IRIS_RANK\" = 0 ]; then " + rankZero + "; "
                + "else i=0; while [ ! -s " + pidFile + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit " + code + "; fi";
    }

    // ---- several nodes, each with its own launcher ----

    /** This process's environment with a job token that every node's launcher shares. */
    private static Map<String, String> withSharedToken() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("IRIS_JOB_TOKEN", "shared0123");
        return env;
    }

    private static LaunchOptions secondOfTwoNodes(int ranksPerNode, String... command) {
        return LaunchOptions.of(ranksPerNode, command).withMasterAddr("gpu03").withMasterPort(29600).withNodes(2, 1);
    }

    @Test
    void eachNodeNumbersItsRanksAfterThoseOfTheNodesBefore() {
        LaunchOptions o = secondOfTwoNodes(4, "x").withGpus(2);
        List<Map<String, String>> envs = Launcher.rankEnvironments(o, 29600, null, Launcher.placement(o, 0), Map.of());
        assertEquals(4, envs.size());
        for (int local = 0; local < 4; local++) {
            Map<String, String> env = envs.get(local);
            int rank = 4 + local;
            assertEquals(Integer.toString(rank), env.get("IRIS_RANK"));
            assertEquals("8", env.get("IRIS_WORLD_SIZE"));
            assertEquals(Integer.toString(local), env.get("IRIS_LOCAL_RANK"));
            assertEquals("4", env.get("IRIS_LOCAL_WORLD_SIZE"));
            assertEquals("1", env.get("IRIS_NODE_RANK"));
            assertEquals("2", env.get("IRIS_NODE_COUNT"));
            assertEquals(Integer.toString(local % 2), env.get("IRIS_DEVICE"), "local ranks on this node's GPUs");
            assertEquals("iris-shared-gpu-rank-" + rank, env.get("NCCL_HOSTID"), "host ids differ across nodes");
            assertFalse(env.containsKey("IRIS_JOB_TOKEN"), "the ranks inherit the shared token");
        }
    }

    @Test
    void dryRunOfTheSecondNodeShowsNodeVariablesAndNoToken() {
        LaunchResult result = Launcher.run(secondOfTwoNodes(2, "./train").withGpus(2).withDryRun(true),
                lines::add, lines::add, withSharedToken());
        assertEquals(0, result.exitCode());
        assertEquals(List.of(
                "[2] IRIS_RANK=2 IRIS_WORLD_SIZE=4 IRIS_LOCAL_RANK=0 IRIS_LOCAL_WORLD_SIZE=2 IRIS_NODE_RANK=1"
                        + " IRIS_NODE_COUNT=2 IRIS_MASTER_ADDR=gpu03 IRIS_MASTER_PORT=29600 IRIS_DEVICE=0"
                        + " NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 -- ./train",
                "[3] IRIS_RANK=3 IRIS_WORLD_SIZE=4 IRIS_LOCAL_RANK=1 IRIS_LOCAL_WORLD_SIZE=2 IRIS_NODE_RANK=1"
                        + " IRIS_NODE_COUNT=2 IRIS_MASTER_ADDR=gpu03 IRIS_MASTER_PORT=29600 IRIS_DEVICE=1"
                        + " NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 -- ./train"),
                lines);
    }

    @Test
    void severalNodesWithoutASharedTokenStartNothing() {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.remove("IRIS_JOB_TOKEN");
        env.remove("IRIS_JOB_TOKEN_FILE");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Launcher.run(secondOfTwoNodes(2, "true"), lines::add, lines::add, env));
        assertTrue(e.getMessage().startsWith("--nnodes 2 needs the same job token on every node"), e.getMessage());
        assertEquals(List.of(), lines);
    }

    @Test
    void ranksOfTheSecondNodeSeeGlobalRanksAndTheSharedToken() {
        LaunchOptions o = secondOfTwoNodes(2, "sh", "-c",
                "echo \"$IRIS_RANK $IRIS_LOCAL_RANK $IRIS_NODE_RANK/$IRIS_NODE_COUNT $IRIS_WORLD_SIZE $IRIS_JOB_TOKEN\"");
        LaunchResult result = Launcher.run(o, lines::add, lines::add, withSharedToken());
        assertEquals(new LaunchResult(0, LaunchResult.NO_RANK, 0, List.of(0, 0), List.of(), false), result);
        assertEquals(Set.of("[2] 2 0 1/2 4 shared0123", "[3] 3 1 1/2 4 shared0123"), Set.copyOf(lines));
    }

    @Test
    void aFailureOnTheSecondNodeNamesTheGlobalRank() {
        LaunchOptions o = secondOfTwoNodes(2, "sh", "-c", "if [ \"$IRIS_LOCAL_RANK\" = 1 ]; then exit 3; fi; sleep 20")
                .withStopDelay(Duration.ZERO);
        LaunchResult result = Launcher.run(o, lines::add, lines::add, withSharedToken());
        assertEquals(3, result.exitCode());
        assertEquals(3, result.failedRank());
        assertEquals(List.of(2), result.stoppedRanks());
        assertEquals(3, result.rankExitCodes().get(1), "exit codes by local rank");
        assertTrue(lines.contains("iris-run: rank 3 failed first with exit code 3; stopped ranks [2]"), lines::toString);
    }

    // ---- bin/iris-run as a subprocess ----

    @Test
    void scriptRunsTheLauncher() throws Exception {
        Path log = tmp.resolve("out.log");
        // Inherited NCCL_NVLS_ENABLE=1 must not reach the ranks.
        Process p = script(log, Map.of("NCCL_NVLS_ENABLE", "1"),
                "-n", "2", "--", "sh", "-c", "echo hi $IRIS_RANK nvls=$NCCL_NVLS_ENABLE");
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "iris-run did not finish");
        String output = Files.readString(log);
        assertEquals(0, p.exitValue(), output);
        assertEquals(Set.of("[0] hi 0 nvls=0", "[1] hi 1 nvls=0"), Set.copyOf(output.lines().toList()), output);
    }

    @Test
    void scriptExitsTwoOnBadUsage() throws Exception {
        Path log = tmp.resolve("out.log");
        Process p = script(log, Map.of(), "-n", "2", "--frobnicate", "--", "true");
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "iris-run did not finish");
        String output = Files.readString(log);
        assertEquals(2, p.exitValue(), output);
        assertEquals(List.of("iris-run: unknown option --frobnicate", LaunchOptions.USAGE), output.lines().toList());
    }

    @Test
    void sigtermToTheLauncherStopsEveryRank() throws Exception {
        Path log = tmp.resolve("out.log");
        Process p = script(log, Map.of(), "-n", "2", "--", "sh", "-c",
                "sleep 60 & echo $! > " + tmp + "/pid$IRIS_RANK.tmp; mv " + tmp + "/pid$IRIS_RANK.tmp "
                        + tmp + "/pid$IRIS_RANK; wait");
        List<Long> sleepers = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            Path pidFile = tmp.resolve("pid" + rank);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!Files.exists(pidFile)) {
                if (System.nanoTime() > deadline || !p.isAlive()) {
                    p.destroyForcibly();
                    fail("rank " + rank + " never started: " + Files.readString(log));
                }
                Thread.sleep(20);
            }
            sleepers.add(Long.parseLong(Files.readString(pidFile).trim()));
        }
        p.destroy(); // SIGTERM to the JVM: bin/iris-run execs java
        assertTrue(p.waitFor(15, TimeUnit.SECONDS), "launcher did not exit on SIGTERM");
        assertTrue(Files.readString(log).contains("iris-run: interrupted; stopping ranks [0, 1]"), Files.readString(log));
        for (long pid : sleepers) {
            assertGone(pid);
        }
    }

    // ---- helpers ----

    private record Captured(int code, String out, String err) {
    }

    private static Captured execute(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = Launcher.execute(args, o, e);
        }
        return new Captured(code, out.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"),
                err.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
    }

    /** Starts bin/iris-run with this JVM and these test classes, output (both streams) to {@code log}. */
    private static Process script(Path log, Map<String, String> env, String... args) throws IOException {
        Path runner = repoRoot().resolve("bin/iris-run");
        assertTrue(Files.isExecutable(runner), runner + " must be executable");
        List<String> command = new ArrayList<>();
        command.add(runner.toString());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("IRIS_LAUNCHER_CP", classesDir().toString());
        return builder.start();
    }

    /** The directory or jar this test loaded the launcher from. */
    static Path classesDir() {
        try {
            return Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code -Diris.home}, else the nearest directory above the working directory holding bin/iris-run. */
    static Path repoRoot() {
        String home = System.getProperty("iris.home");
        if (home != null && !home.isBlank()) {
            return Path.of(home).toAbsolutePath();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.exists(dir.resolve("bin/iris-run"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no bin/iris-run above " + Path.of("").toAbsolutePath()
                + "; set -Diris.home to the repository root");
    }

    /** Polls briefly: SIGKILL is delivered asynchronously. */
    private static void assertGone(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (ProcessHandle.of(pid).map(Launcher::isRunning).orElse(false)) {
            if (System.nanoTime() > deadline) {
                fail("process " + pid + " still runs: "
                        + ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("?"));
            }
            Thread.sleep(20);
        }
    }
}

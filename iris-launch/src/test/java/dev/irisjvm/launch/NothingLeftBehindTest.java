package dev.irisjvm.launch;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * However a job ends, none of its processes keeps running: not the ranks, not their children, not
 * the grandchildren that detached. Each case starts {@code bin/iris-run} as a process of its own,
 * the way a user runs it, with ranks that start a child, a grandchild that detaches by double
 * forking, and one that leaves the rank's session ({@code setsid}); then it ends the job, and
 * counts the processes that still carry the test's own marker variable (the launcher and its guard
 * carry it too). Linux only; every wait is bounded, and whatever is left is killed after each test.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NothingLeftBehindTest {

    /** A child, a detached grandchild and a process in a session of its own, then a ready file. */
    private static final String FAMILY = "sleep 300 & (sleep 300 &); setsid sleep 300 & ";
    /** Processes per rank running {@link #FAMILY} and then {@code sleep}: sh and four sleeps. */
    private static final int PER_RANK = 5;
    /** How long the job's processes may take to vanish once it has ended. */
    private static final Duration LEFTOVER_LIMIT = Duration.ofSeconds(5);
    private static final Duration READY_LIMIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    private MarkedProcesses marked;
    private Process launcher;

    @BeforeEach
    void linuxWithUtilLinux() {
        assumeTrue(ProcStat.AVAILABLE, "needs /proc (Linux)");
        assumeTrue(RankWrapper.detect(System.getenv()).startsSessions(), "needs util-linux setsid");
        marked = new MarkedProcesses();
    }

    @AfterEach
    void killWhateverIsLeft() throws InterruptedException {
        if (launcher != null && launcher.isAlive()) {
            launcher.destroyForcibly();
            launcher.waitFor(5, TimeUnit.SECONDS);
        }
        if (marked != null) {
            marked.close();
        }
    }

    @Test
    void sigkillOfTheLauncherMidJob() throws Exception {
        launcher = start(List.of(), "-n", "2", "--", "sh", "-c", FAMILY + ready() + "sleep 300");
        int before = awaitReady(2);

        long start = System.nanoTime();
        launcher.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertTrue(launcher.waitFor(5, TimeUnit.SECONDS), "the launcher survived SIGKILL");
        assertNothingLeft("SIGKILL", before, start);
        // The ranks' children have no parent-death signal: the guard stopped them.
        assertTrue(log().contains("iris-run: the launcher (pid " + launcher.pid() + ") ended without cleaning up; stopping"), log());
    }

    @Test
    void sigtermToTheLauncher() throws Exception {
        launcher = start(List.of(), "-n", "2", "--", "sh", "-c", FAMILY + ready() + "sleep 300");
        int before = awaitReady(2);

        long start = System.nanoTime();
        launcher.destroy(); // SIGTERM
        assertTrue(launcher.waitFor(10, TimeUnit.SECONDS), "the launcher did not exit on SIGTERM");
        assertNothingLeft("SIGTERM", before, start);
    }

    @Test
    void ctrlCToTheLaunchersProcessGroup() throws Exception {
        // A terminal sends SIGINT to its whole foreground process group: here the launcher leads
        // one of its own (setsid), which the test signals as the terminal would.
        List<String> prefix = new ArrayList<>(List.of("setsid"));
        if (envResetsSignals()) {
            prefix.addAll(List.of("env", "--default-signal=INT")); // in case whoever started the tests ignores SIGINT
        }
        launcher = start(prefix, "-n", "2", "--", "sh", "-c", FAMILY + ready() + "sleep 300");
        int before = awaitReady(2);
        assumeFalse(ignoresSigint(launcher.pid()), "SIGINT is ignored in the launcher: started with it ignored");

        long start = System.nanoTime();
        Process kill = new ProcessBuilder("sh", "-c", "kill -s INT -- -" + launcher.pid()).start();
        assertTrue(kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0, "could not signal the group");
        assertTrue(launcher.waitFor(10, TimeUnit.SECONDS), "the launcher did not exit on SIGINT");
        assertNothingLeft("SIGINT to the process group", before, start);
    }

    @Test
    void rankThatFailsWhileItsChildAndGrandchildRun() throws Exception {
        // Rank 1 fails once both ranks have their families; rank 0 keeps running.
        String script = FAMILY + ready() + "if [ \"$IRIS_RANK\" = 1 ]; then " + awaitFile("ready0") + " exit 3; fi; sleep 300";
        launcher = start(List.of(), "-n", "2", "--stop-delay", "0", "--", "sh", "-c", script);
        assertTrue(launcher.waitFor(20, TimeUnit.SECONDS), "the launcher did not end the job");
        long start = System.nanoTime();
        String output = Files.readString(tmp.resolve("out.log"));
        assertEquals(3, launcher.exitValue(), output);
        assertTrue(output.contains("iris-run: rank 1 failed first with exit code 3; stopped ranks [0]"), output);
        assertTrue(output.contains(" the ranks left running: "), output);
        assertNothingLeft("a rank failed (counted from the launcher's exit)", 0, start);
    }

    @Test
    void rankThatSucceedsLeavingBackgroundChildren() throws Exception {
        launcher = start(List.of(), "-n", "2", "--", "sh", "-c", FAMILY + "echo done; exit 0");
        assertTrue(launcher.waitFor(20, TimeUnit.SECONDS), "the launcher did not end the job");
        long start = System.nanoTime();
        String output = Files.readString(tmp.resolve("out.log"));
        assertEquals(0, launcher.exitValue(), output);
        assertTrue(output.contains("[0] done") && output.contains("[1] done"), output);
        assertTrue(output.contains("iris-run: stopped 6 processes the ranks left running: "), output);
        assertFalse(output.contains("not waiting for more output"), "nothing may hold the output open: " + output);
        assertNothingLeft("ranks exited 0 (counted from the launcher's exit)", 0, start);
    }

    // ---- the guard on its own, in this JVM ----

    @Test
    void guardStopsTheJobWhenItsPipeCloses() throws Exception {
        RankWrapper wrapper = RankWrapper.detect(System.getenv());
        Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(marked.env());
        List<String> messages = Collections.synchronizedList(new ArrayList<>());
        ProcessGuard guard = ProcessGuard.start(wrapper, env, List.of(0), "guardtoken", Duration.ofSeconds(1), messages::add);
        Process rank = startRank(wrapper, env, "guardtoken");
        guard.watch(rank.pid());
        int before = awaitReady(1);

        long start = System.nanoTime();
        guard.abandon(); // what the launcher's death does to the pipe
        assertNothingLeft("guard pipe closed", before, start);
        assertEquals(List.of(), messages);
    }

    @Test
    void guardLeavesEverythingAloneOnceTheLauncherSaysDone() throws Exception {
        RankWrapper wrapper = RankWrapper.detect(System.getenv());
        Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(marked.env());
        ProcessGuard guard = ProcessGuard.start(wrapper, env, List.of(0), "guardtoken", Duration.ofSeconds(1), line -> { });
        Process rank = startRank(wrapper, env, "guardtoken");
        guard.watch(rank.pid());
        awaitReady(1);
        List<ProcessHandle> family = marked.running().stream().filter(p -> p.pid() != guard.pid()).toList();

        guard.close();
        assertFalse(ProcessHandle.of(guard.pid()).map(Launcher::isRunning).orElse(false), "the guard exits on done");
        Thread.sleep(300);
        List<ProcessHandle> after = marked.running();
        assertTrue(after.containsAll(family), "the rank's processes must still run: " + MarkedProcesses.describe(after));
        guard.close(); // twice is fine
    }

    // ---- helpers ----

    /** Starts bin/iris-run (after {@code prefix}) with the marker; output to out.log. */
    private Process start(List<String> prefix, String... args) throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(LauncherTest.repoRoot().resolve("bin/iris-run").toString());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(tmp.resolve("out.log").toFile());
        builder.environment().putAll(marked.env());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("IRIS_LAUNCHER_CP", LauncherTest.classesDir().toString());
        return builder.start();
    }

    /** A rank 0 of job {@code token} started as the launcher would, running {@link #FAMILY}. */
    private Process startRank(RankWrapper wrapper, Map<String, String> env, String token) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(wrapper.wrap(List.of("sh", "-c", FAMILY + ready() + "sleep 300")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().clear();
        builder.environment().putAll(env);
        builder.environment().put("IRIS_RANK", "0");
        builder.environment().put("IRIS_JOB_TOKEN", token);
        Process rank = builder.start();
        rank.getOutputStream().close();
        return rank;
    }

    /** Shell words that create {@code ready$IRIS_RANK} in the test's directory. */
    private String ready() {
        return "touch " + tmp + "/ready$IRIS_RANK; ";
    }

    /** Shell words that wait, at most 10 s, for a file in the test's directory. */
    private String awaitFile(String name) {
        return "i=0; while [ ! -e " + tmp + "/" + name + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done;";
    }

    /** Waits for every rank's ready file; returns how many processes carry the marker then. */
    private int awaitReady(int ranks) throws Exception {
        long deadline = System.nanoTime() + READY_LIMIT.toNanos();
        for (int rank = 0; rank < ranks; rank++) {
            while (!Files.exists(tmp.resolve("ready" + rank))) {
                if (System.nanoTime() - deadline > 0 || (launcher != null && !launcher.isAlive())) {
                    fail("rank " + rank + " never got ready: " + log());
                }
                Thread.sleep(20);
            }
        }
        // A process caught in the middle of an exec may not show its environment for a moment.
        List<ProcessHandle> found = marked.running();
        while (found.size() < ranks * PER_RANK) {
            if (System.nanoTime() - deadline > 0) {
                fail("expected the ranks' families, found " + MarkedProcesses.describe(found));
            }
            Thread.sleep(20);
            found = marked.running();
        }
        return found.size();
    }

    private void assertNothingLeft(String how, int before, long start) throws Exception {
        List<ProcessHandle> left = marked.awaitNone(LEFTOVER_LIMIT);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("nothing-left-behind: " + how + ": " + before + " marked processes before, "
                + left.size() + " left after " + millis + " ms");
        assertEquals(List.of(), left, how + ": still running " + MarkedProcesses.describe(left) + "; " + log());
    }

    private String log() throws IOException {
        Path log = tmp.resolve("out.log");
        return Files.exists(log) ? "launcher output:\n" + Files.readString(log) : "";
    }

    /** Whether SIGINT is in the process's ignored set ({@code SigIgn} in /proc/PID/status). */
    private static boolean ignoresSigint(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("SigIgn:")) {
                long mask = Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16);
                return (mask & (1L << (2 - 1))) != 0;
            }
        }
        return false;
    }

    /** Whether coreutils env knows {@code --default-signal} (8.31 and later). */
    private static boolean envResetsSignals() throws Exception {
        Process probe = new ProcessBuilder("env", "--default-signal=INT", "true")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!probe.waitFor(5, TimeUnit.SECONDS)) {
            probe.destroyForcibly();
            return false;
        }
        return probe.exitValue() == 0;
    }
}

package dev.irisjvm.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The running processes whose environment carries one test's marker, a variable with a value of
 * its own, found through {@code /proc/PID/environ} (Linux). A test puts {@link #env()} into what it
 * starts, so that everything started below inherits it, and counts what is left; {@link #close()}
 * kills whatever still carries the marker, so that a failed assertion leaks nothing.
 *
 * <pre>{@code
 * try (MarkedProcesses marked = new MarkedProcesses()) {
 *     builder.environment().putAll(marked.env());
 *     ...
 *     assertEquals(List.of(), marked.awaitNone(Duration.ofSeconds(5)));
 * }
 * }</pre>
 */
final class MarkedProcesses implements AutoCloseable {

    static final String VARIABLE = "IRIS_TEST_LEFTOVER_MARK";
    private static final Duration KILL_WAIT = Duration.ofSeconds(3);

    private final String value = UUID.randomUUID().toString();

    /** The variable to add to a test process's environment. */
    Map<String, String> env() {
        return Map.of(VARIABLE, value);
    }

    /** Every running process (no zombie) that carries the marker, this JVM never among them. */
    List<ProcessHandle> running() {
        byte[] entry = (VARIABLE + "=" + value).getBytes(StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self && carries(p.pid(), entry) && Launcher.isRunning(p))
                .toList();
    }

    /**
     * Polls until no process carries the marker or {@code limit} has passed.
     *
     * @return what still runs then, empty when all went
     */
    List<ProcessHandle> awaitNone(Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        List<ProcessHandle> left = running();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            left = running();
        }
        return left;
    }

    /** Pid and command line of each process, for failure messages. */
    static String describe(List<ProcessHandle> processes) {
        return processes.stream()
                .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                .collect(Collectors.joining("; ", "[", "]"));
    }

    /** SIGKILLs everything that still carries the marker and waits, boundedly, for it to go. */
    @Override
    public void close() throws InterruptedException {
        running().forEach(ProcessHandle::destroyForcibly);
        awaitNone(KILL_WAIT);
    }

    private static boolean carries(long pid, byte[] entry) {
        byte[] environ;
        try {
            environ = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
        } catch (IOException | SecurityException | UncheckedIOException gone) {
            return false;
        }
        int from = 0;
        for (int i = 0; i <= environ.length; i++) {
            if (i == environ.length || environ[i] == 0) {
                if (i - from == entry.length && Arrays.equals(environ, from, i, entry, 0, entry.length)) {
                    return true;
                }
                from = i + 1;
            }
        }
        return false;
    }
}

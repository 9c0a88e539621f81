package dev.irisjvm.launch;


import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A small shell process, one per launch, that stops the job's processes when the launcher dies
 * without doing so itself: SIGKILL, the OOM killer, a crash, a shutdown hook cut short.
 *
 * <p>The launcher holds the guard's stdin, a pipe, open for the life of the job and never writes
 * to it but a few lines: the job token, each rank's pid as it starts, and {@code done} once the
 * job has ended and the launcher has cleaned up. When the launcher dies the kernel closes the
 * pipe, however the launcher died, and the guard reads end of input without {@code done}. It then
 * sends SIGTERM to every process of the job, polls, and sends SIGKILL to whatever still runs after
 * the grace period. The processes of the job are those in a session one of the ranks leads (each
 * rank starts through {@code setsid}, see {@link RankWrapper}), which catches children and
 * grandchildren however they were re-parented, and those whose environment carries the job token
 * and one of this node's ranks ({@code /proc/PID/environ}), which catches those that started a
 * session of their own. The script is {@code process-guard.sh} beside this class.
 *
 * <p>Why a pipe and not only the parent-death signal: the pipe closes on any death of the launcher
 * with no window at all (it exists before any rank does), does not depend on which thread forked
 * what, and the guard then reaches the ranks' descendants, which a parent-death signal never does
 * (it reaches the launcher's direct children only). The ranks themselves keep a closed stdin: the
 * pipe belongs to the guard alone, so a rank that reads stdin still sees end of input at once. The
 * guard runs in a session of its own and ignores SIGINT and SIGHUP, so that Ctrl-C or a signal to
 * the launcher's process group does not take it down with the launcher; its environment is the
 * launcher's without the rank variables and token, so it never counts itself as part of the job.
 *
 * <p>Elsewhere: without {@code /proc} (macOS) the guard stops the ranks it was told about, but not
 * what they started; without {@code /bin/sh} (Windows) there is no guard, and ranks may outlive a
 * launcher that is killed.
 *
 * <pre>{@code
 * try (ProcessGuard guard = ProcessGuard.start(RankWrapper.detect(env), env, List.of(0, 1), token,
 *         Duration.ofSeconds(3), System.err::println)) {
 *     Process rank = builder.start();
 *     guard.watch(rank.pid());
 *     ...
 * } // close(): the launcher has cleaned up; the guard exits without touching anything
 * }</pre>
 */
final class ProcessGuard implements AutoCloseable {

    private static final String SCRIPT_RESOURCE = "process-guard.sh";
    private static final String SCRIPT_VARIABLE = "IRIS_RUN_GUARD_SCRIPT";
    private static final Path SHELL = Path.of("/bin/sh");
    /** How long {@link #close} waits for the guard to read {@code done} and exit. */
    private static final Duration EXIT_WAIT = Duration.ofSeconds(2);
    private static final String PREFIX = "iris-run: ";

    private final Process process;       // null when there is no guard
    private final OutputStream commands; // null when there is no guard
    private final Consumer<String> warnings;
    private boolean broken;              // guarded by this
    private boolean closed;              // guarded by this

    private ProcessGuard(Process process, Consumer<String> warnings) {
        this.process = process;
        this.commands = process == null ? null : process.getOutputStream();
        this.warnings = warnings;
    }

    /**
     * Starts the guard of a launch. Never fails: where no guard can run, it warns (unless there is
     * simply no {@code /bin/sh}) and returns one that does nothing.
     *
     * @param wrapper     how the ranks start; whether they lead sessions, and setsid for the guard
     * @param environment the launcher's environment; the guard gets it without the rank variables
     * @param ranks       this node's global ranks
     * @param token       the job token the ranks inherit, or null when there is none to look for
     * @param grace       time between SIGTERM and SIGKILL
     * @param warnings    where to say that the guard could not start or stopped early
     */
    static ProcessGuard start(RankWrapper wrapper, Map<String, String> environment, Collection<Integer> ranks,
                              String token, Duration grace, Consumer<String> warnings) {
        if (!Files.isExecutable(SHELL)) {
            return new ProcessGuard(null, warnings);
        }
        String script;
        try {
            script = script();
        } catch (RuntimeException e) {
            warnings.accept(PREFIX + "no process guard (" + e.getMessage()
                    + "); if the launcher is killed, what the ranks started may keep running");
            return new ProcessGuard(null, warnings);
        }
        // The script travels in the environment, so that ps shows one short line for the guard.
        List<String> command = new ArrayList<>(List.of(SHELL.toString(), "-c", "eval \"$" + SCRIPT_VARIABLE + "\"",
                "iris-run-guard",
                Long.toString(grace.toMillis()), wrapper.startsSessions() ? "1" : "0"));
        ranks.forEach(rank -> command.add(Integer.toString(rank)));
        ProcessBuilder builder = new ProcessBuilder(wrapper.inNewSession(command))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                // It speaks only after the launcher died, and then to the launcher's stderr.
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().clear();
        builder.environment().putAll(environment);
        Launcher.MANAGED_VARIABLES.forEach(builder.environment()::remove);
        builder.environment().remove(RankVariables.IRIS_JOB_TOKEN_FILE);
        builder.environment().put(SCRIPT_VARIABLE, script);
        ProcessGuard guard;
        try {
            guard = new ProcessGuard(builder.start(), warnings);
        } catch (IOException e) {
            warnings.accept(PREFIX + "no process guard (" + e.getMessage()
                    + "); if the launcher is killed, what the ranks started may keep running");
            return new ProcessGuard(null, warnings);
        }
        if (token != null && !token.isEmpty()) {
            // On stdin, not the command line, which every user of the host can read.
            guard.send("token " + token);
        }
        return guard;
    }

    /** A guard that guards nothing. */
    static ProcessGuard none() {
        return new ProcessGuard(null, line -> { });
    }

    /** Tells the guard that a rank started as process {@code pid}. */
    void watch(long pid) {
        send("pid " + pid);
    }

    /** The guard's pid, or -1 when there is none. */
    long pid() {
        return process == null ? -1 : process.pid();
    }

    /**
     * The job ended and the launcher has stopped what it left: the guard exits without touching
     * anything. Waits briefly for it to exit; safe to call twice.
     */
    @Override
    public void close() {
        if (process == null) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            send("done");
            closed = true;
            closeQuietly(commands);
        }
        try {
            if (!process.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Closes the pipe without {@code done}, as the launcher's death does: the guard stops the job's
     * processes. For a launch that ends without having stopped them (an unexpected exception), and
     * for tests of the guard that kill no JVM.
     */
    void abandon() {
        if (process == null) {
            return;
        }
        synchronized (this) {
            closed = true;
            closeQuietly(commands);
        }
    }

    private synchronized void send(String line) {
        if (commands == null || closed || broken) {
            return;
        }
        try {
            commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            commands.flush();
        } catch (IOException e) {
            broken = true;
            warnings.accept(PREFIX + "the process guard (pid " + process.pid() + ") exited early"
                    + exitDescription() + "; if the launcher is killed, what the ranks started may keep running");
        }
    }

    private String exitDescription() {
        return process.isAlive() ? "" : " with " + Launcher.describeExitCode(process.exitValue());
    }

    private static void closeQuietly(OutputStream stream) {
        try {
            stream.close();
        } catch (IOException alreadyGone) {
            // The guard exited already; there is nothing left to tell it.
        }
    }

    private static String script() {
        try (InputStream in = ProcessGuard.class.getResourceAsStream(SCRIPT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SCRIPT_RESOURCE + " is missing beside " + ProcessGuard.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + SCRIPT_RESOURCE, e);
        }
    }
}

package dev.irisjvm.launch;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The programs a rank's command is started through on Linux, so that the rank cannot outlive the
 * launcher and everything it starts can be found again:
 * <ul>
 *   <li>{@code setpriv --pdeathsig TERM --} (util-linux 2.33 or later) sets the rank's parent-death
 *       signal: the kernel sends the rank SIGTERM the moment the launcher dies, SIGKILL included.
 *       Java cannot call {@code prctl(PR_SET_PDEATHSIG)} itself, and setpriv sets it and then
 *       execs, so the signal lands on the rank's own process, the launcher's direct child. The
 *       kernel sends it when the <em>thread</em> that forked the rank ends, not the process:
 *       {@link Launcher#run} starts every rank from its calling thread, which stays in
 *       {@code run} until every rank has exited. The setting survives exec, except into a
 *       set-user-ID or set-group-ID program, and is not inherited by the rank's children: those
 *       are {@link ProcessGuard}'s to stop.</li>
 *   <li>{@code setsid -w --} makes the rank the leader of a session of its own, so that its
 *       children and grandchildren, the ones that detach by double forking included, share its
 *       session id and can be told from every other process ({@link ProcStat#session()}). The
 *       rank is then also out of the terminal's process group: Ctrl-C reaches the launcher, which
 *       stops the ranks, not the ranks directly. {@code -w} only matters if setsid has to fork
 *       (it does when started as a process group leader, which a child of the JVM never is).</li>
 * </ul>
 * Both exec in place, so the rank keeps the pid the launcher started and its exit code is the
 * rank's own. Each tool is used only where it is found on {@code PATH} (or in {@code /usr/bin},
 * {@code /bin}) and a trial run shows that it works; elsewhere (macOS, old util-linux) the rank
 * starts unwrapped, as a plain child of the launcher.
 *
 * <pre>{@code
 * RankWrapper wrapper = RankWrapper.detect(System.getenv());
 * List<String> argv = wrapper.wrap(List.of("java", "-cp", "app.jar", "Main"));
 * // on Debian 12: [/usr/bin/setpriv, --pdeathsig, TERM, --, /usr/bin/setsid, -w, --, java, -cp, app.jar, Main]
 * }</pre>
 */
final class RankWrapper {

    /** How long a trial run of setpriv or setsid may take before the tool counts as unusable. */
    private static final long PROBE_LIMIT_MS = 5_000;
    /** A trial's exit code that only the command run through the tool produces. */
    private static final int PROBE_CODE = 42;
    /** Trial results by the trial's command line, so that each JVM tries each tool once. */
    private static final Map<String, Boolean> WORKS = new ConcurrentHashMap<>();
    /** Where util-linux lives when {@code PATH} leaves it out. */
    private static final String TOOL_DIRS = "/usr/bin" + File.pathSeparator + "/bin";

    private final Path setpriv;  // null: no parent-death signal
    private final Path setsid;   // null: the rank shares the launcher's session

    private RankWrapper(Path setpriv, Path setsid) {
        this.setpriv = setpriv;
        this.setsid = setsid;
    }

    /** The tools that work here, looked up on the {@code PATH} in {@code environment}. */
    static RankWrapper detect(Map<String, String> environment) {
        String path = environment.get("PATH");
        Path setpriv = findTool("setpriv", path)
                .filter(tool -> works(List.of(tool.toString(), "--pdeathsig", "TERM", "--")))
                .orElse(null);
        Path setsid = findTool("setsid", path)
                .filter(tool -> works(List.of(tool.toString(), "-w", "--")))
                .orElse(null);
        return new RankWrapper(setpriv, setsid);
    }

    /** A wrapper that starts commands as they are (for tests and systems without the tools). */
    static RankWrapper none() {
        return new RankWrapper(null, null);
    }

    /** The command line that starts {@code command} as a rank. */
    List<String> wrap(List<String> command) {
        List<String> argv = new ArrayList<>();
        if (setpriv != null) {
            argv.addAll(List.of(setpriv.toString(), "--pdeathsig", "TERM", "--"));
        }
        if (setsid != null) {
            argv.addAll(List.of(setsid.toString(), "-w", "--"));
        }
        argv.addAll(command);
        return argv;
    }

    /** The command line that starts a helper in a session of its own, where setsid works. */
    List<String> inNewSession(List<String> command) {
        List<String> argv = new ArrayList<>();
        if (setsid != null) {
            argv.addAll(List.of(setsid.toString(), "--"));
        }
        argv.addAll(command);
        return argv;
    }

    /** Whether each rank leads a session whose id is its pid. */
    boolean startsSessions() {
        return setsid != null;
    }

    /** Whether each rank gets SIGTERM when the launcher dies. */
    boolean setsParentDeathSignal() {
        return setpriv != null;
    }

    /** Whether {@link #wrap} adds anything. */
    boolean wraps() {
        return setpriv != null || setsid != null;
    }

    /** What this wrapper does, for messages: e.g. {@code "setpriv --pdeathsig TERM, setsid"}. */
    String describe() {
        List<String> parts = new ArrayList<>();
        if (setpriv != null) {
            parts.add("setpriv --pdeathsig TERM");
        }
        if (setsid != null) {
            parts.add("setsid");
        }
        return parts.isEmpty() ? "none" : String.join(", ", parts);
    }

    /**
     * Fails the way starting the program directly would, while a wrapper stands in front of it:
     * otherwise a missing program would surface as the wrapper's exit code 127 of a rank that
     * ran, not as a rank that could not be started. Resolves like {@code execvp}: a name with a
     * {@code /} is a path, any other is looked up on {@code PATH} (an empty entry is the working
     * directory).
     *
     * @throws IOException naming the program when no executable file answers to it
     */
    static void requireExecutable(String program, Map<String, String> rankEnvironment) throws IOException {
        if (program.contains("/")) {
            if (executableFile(program).isEmpty()) {
                throw new IOException("Cannot run program \"" + program + "\": no executable file there");
            }
            return;
        }
        if (find(program, rankEnvironment.get("PATH")).isEmpty()) {
            throw new IOException("Cannot run program \"" + program + "\": not found on PATH");
        }
    }

    /** A tool on {@code path}, else in /usr/bin or /bin. */
    private static Optional<Path> findTool(String name, String path) {
        return find(name, path).or(() -> find(name, TOOL_DIRS));
    }

    /** The first executable file called {@code name} on {@code path}, as execvp searches it. */
    private static Optional<Path> find(String name, String path) {
        // execvp's default when PATH is unset.
        String search = path != null ? path : "/bin" + File.pathSeparator + "/usr/bin";
        for (String dir : search.split(File.pathSeparator, -1)) {
            Optional<Path> file = executableFile((dir.isEmpty() ? "." : dir) + "/" + name);
            if (file.isPresent()) {
                return file;
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> executableFile(String name) {
        try {
            Path file = Path.of(name);
            return Files.isRegularFile(file) && Files.isExecutable(file) ? Optional.of(file) : Optional.empty();
        } catch (SecurityException | InvalidPathException e) {
            return Optional.empty();
        }
    }

    /**
     * Runs {@code prefix /bin/sh -c 'exit 42'} once per tool: the tool works if the shell it
     * started reports back. An old setpriv without {@code --pdeathsig} exits 1 with a usage message.
     */
    private static boolean works(List<String> prefix) {
        String key = String.join(" ", prefix);
        Boolean known = WORKS.get(key);
        if (known != null) {
            return known;
        }
        List<String> argv = new ArrayList<>(prefix);
        argv.addAll(List.of("/bin/sh", "-c", "exit " + PROBE_CODE));
        Process process = null;
        boolean works = false;
        try {
            process = new ProcessBuilder(argv)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            process.getOutputStream().close();
            works = process.waitFor(PROBE_LIMIT_MS, TimeUnit.MILLISECONDS) && process.exitValue() == PROBE_CODE;
        } catch (IOException e) {
            works = false;
        } catch (InterruptedException e) {
            // Not remembered: the next launch tries again.
            Thread.currentThread().interrupt();
            return false;
        } finally {
            if (process != null && process.isAlive()) {
                process.destroyForcibly();
            }
        }
        WORKS.put(key, works);
        return works;
    }
}

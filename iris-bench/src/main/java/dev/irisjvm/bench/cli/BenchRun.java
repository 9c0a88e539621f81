package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.BenchmarkTargets;
import dev.irisjvm.bench.report.ReportInput;
import dev.irisjvm.bench.report.ReportKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * One benchmark from sweep to report, the steps every kind shares: the sweep (one JVM, or one per
 * rank through bin/iris-run), JMH inside every rank where the kind has JMH benchmarks, then the
 * report, with the raw JSON copied beside it and the commands in {@code KIND-commands.txt}. A
 * subclass says what its sweep is and adds its own options.
 *
 * <p>Exit codes: 0 done; 2 bad usage; 3 the report was written but a chart was not, or an output
 * check failed (listed in the report); else the failing step's code. A sweep without its JSON
 * stops everything; a JMH failure still leaves a report, whose JMH section says so.
 */
abstract class BenchRun implements Callable<Integer> {
    /** Exit code of bad usage. */
    static final int EXIT_USAGE = 2;
    /** What rank 0's JMH run leaves per rank in the work folder. */
    private static final String JMH_SHELL = "java=$1 cp=$2 dir=$3; shift 3; exec \"$java\" -Djmh.ignoreLock=true -cp \"$cp\" "
            + "org.openjdk.jmh.Main \"$@\" -rff \"$dir/jmh-rank${IRIS_RANK}.json\"";

    @Mixin
    RunOptions options = new RunOptions();

    @Spec
    CommandSpec spec;

    final BenchHome home = BenchHome.current();

    private final ReportKind kind;
    /** The sweep's main class. */
    private final String sweepMain;
    /** The sweep's options that --quick stands for. */
    private final List<String> quickSweepArgs;

    BenchRun(ReportKind kind, String sweepMain, List<String> quickSweepArgs) {
        this.kind = kind;
        this.sweepMain = sweepMain;
        this.quickSweepArgs = List.copyOf(quickSweepArgs);
    }

    /** The sweep's options that --quick stands for. */
    List<String> quickSweepArgs() {
        return quickSweepArgs;
    }

    /** The report this run writes; a subclass whose options choose another one says so here. */
    ReportKind kind() {
        return kind;
    }

    /**
     * Ranks to start through bin/iris-run (on each node, where {@link #launchOptions()} name
     * several), or 0 for one JVM without the launcher; throws IllegalArgumentException on bad usage.
     */
    abstract int ranks();

    /**
     * Launcher options before {@code -n}, e.g. {@code --nnodes 2 --simulate-nodes}, which make
     * {@link #ranks()} the ranks of each node rather than of the job.
     */
    List<String> launchOptions() {
        return List.of();
    }

    /** {@code bin/iris-run [launchOptions] -n N --}, before each rank's command. */
    List<String> launch(int ranks) {
        return home.launch(launchOptions(), ranks);
    }

    /** The JMH benchmarks (a regular expression), or null for none. */
    String jmhBenchmarks() {
        return null;
    }

    /** JMH options after the fixed ones (-foe true -rf json). */
    List<String> jmhArgs() {
        return List.of();
    }

    /** Whether the commands file has a {@code jmh:} line (empty when JMH was skipped). */
    boolean recordsJmh() {
        return jmhBenchmarks() != null;
    }

    /** Work before the sweep (on the GPUs before the ranks take them); returns more sweep options (e.g. where its extra outputs go). */
    List<String> beforeSweep(Path work) throws IOException, InterruptedException {
        return List.of();
    }

    /** The sweep's environment beyond this JVM's. */
    Map<String, String> sweepEnvironment() {
        return Map.of();
    }

    /** Files of an earlier run in the report folder that must not sit beside this report. */
    List<String> staleGlobs() {
        return List.of(kind().prefix() + "-jmh-rank*.json", kind().prefix() + "-jmh-[0-9]*.json");
    }

    String name() {
        return "iris-bench " + kind().prefix();
    }

    @Override
    public Integer call() throws Exception {
        Path out = options.out.resolve(home).toAbsolutePath().normalize();
        Files.createDirectories(out);
        if (options.reportOnly) {
            return new picocli.CommandLine(new ReportCommand()).execute(kind().prefix(), "--out", out.toString());
        }
        int n;
        try {
            n = ranks();
        } catch (IllegalArgumentException e) {
            System.err.println(name() + ": " + e.getMessage());
            return EXIT_USAGE;
        }
        Path work = Files.createTempDirectory("iris-bench-" + kind().prefix() + ".");
        String ranks = n == 0 ? "one GPU"
                : n + " rank(s)" + (launchOptions().isEmpty() ? "" : " per node (" + String.join(" ", launchOptions()) + ")");
        System.out.println(name() + ": " + ranks + ", raw results in " + work + ", report in " + out);
        List<String> shownArgs = new ArrayList<>(List.of("bin/iris-bench"));
        shownArgs.addAll(spec.root().commandLine().getParseResult().originalArgs());
        String runCommand = home.shown(shownArgs);

        Path sweepJson = work.resolve(kind().sweepFile());
        List<String> sweep = new ArrayList<>(n == 0 ? List.of() : launch(n));
        sweep.addAll(home.javaMain(sweepMain));
        sweep.addAll(List.of("--out", sweepJson.toString()));
        sweep.addAll(beforeSweep(work));
        if (options.quick) {
            sweep.addAll(quickSweepArgs());
        }
        sweep.addAll(options.sweepArgs);
        int sweepRc = Processes.run(sweep, sweepEnvironment());
        if (!Files.isRegularFile(sweepJson) || Files.size(sweepJson) == 0) {
            System.err.println(name() + ": the sweep failed (exit " + sweepRc + ") and wrote no " + sweepJson);
            return sweepRc == 0 ? 1 : sweepRc;
        }
        if (sweepRc != 0) {
            System.err.println(name() + ": the sweep exited " + sweepRc + " (3: an output check failed; see the report)");
        }

        int jmhRc = 0;
        String jmhCommand = "";
        if (jmhBenchmarks() != null) {
            List<String> jmh = new ArrayList<>(launch(n));
            jmh.addAll(List.of("sh", "-c", JMH_SHELL, "sh", home.java(), home.classPath(), work.toString(), jmhBenchmarks(),
                    "-foe", "true", "-rf", "json"));
            jmh.addAll(jmhArgs());
            jmhCommand = home.shown(jmh);
            jmhRc = Processes.run(jmh, Map.of());
            if (jmhRc != 0) {
                System.err.println(name() + ": JMH failed (exit " + jmhRc + "); the report says so in its JMH section");
            }
        }

        Files.writeString(out.resolve(kind().commandsFile()), "run: " + runCommand + "\n"
                + (recordsJmh() ? "jmh: " + jmhCommand + "\n" : ""));
        for (String glob : staleGlobs()) {
            for (Path stale : ReportCommand.filesIn(out, glob)) {
                Files.delete(stale);
            }
        }
        List<Path> jmhFiles = ReportCommand.filesIn(work, "jmh-rank*.json");
        if (jmhBenchmarks() != null && jmhRc == 0 && jmhFiles.size() != n) {
            System.err.println(name() + ": expected " + n + " JMH result files, found " + jmhFiles.size());
        }
        int reportRc;
        try {
            reportRc = ReportCommand.render(new ReportInput(kind(), out, sweepJson, jmhFiles, work, runCommand, jmhCommand,
                    ReportCommand.findingsIn(out, kind()), BenchmarkTargets.forFolder(out)));
        } catch (IOException | RuntimeException e) {
            System.err.println(name() + ": the report failed (" + e.getMessage() + "); raw files kept in " + work);
            return 1;
        }
        if (reportRc != 0) {
            System.err.println(name() + ": charts not written here; on a machine with a full JDK: bin/iris-bench report "
                    + kind().prefix() + " --out " + out);
        }
        for (int rc : new int[] {reportRc, sweepRc, jmhRc}) {
            if (rc != 0) {
                System.err.println(name() + ": wrote " + out.resolve(kind().markdown()) + " with problems (exit " + rc
                        + "); raw files kept in " + work);
                return rc;
            }
        }
        try (Stream<Path> files = Files.walk(work)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        System.out.println(name() + ": wrote " + out.resolve(kind().markdown()));
        return 0;
    }
}

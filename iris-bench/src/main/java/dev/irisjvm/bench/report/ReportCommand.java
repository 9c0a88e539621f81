package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * What the report commands share: read one sweep and the JMH files of the same run, copy the raw
 * JSON next to the report ({@code <prefix>-sweep.json}, {@code <prefix>-jmh-rank0.json}, ...) so
 * it links to the data it was made from, and write the Markdown and charts. Subclasses say which
 * document to write ({@link RmaReport}, {@link CclReport}).
 *
 * <p>Exit codes: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the Markdown was
 * written but a chart was not (no java.desktop module or no fonts: run it again elsewhere on the
 * copied raw JSON).
 */
public abstract class ReportCommand implements Callable<Integer> {
    /** Exit code when the Markdown was written but a chart was not. */
    public static final int EXIT_NO_CHARTS = 3;

    @Option(names = "--sweep", required = true, description = "SweepResult JSON written by the sweep")
    Path sweep;

    @Option(names = "--jmh", arity = "1..*", description = "JMH -rf json file(s), one per rank; the rank is read from the name (…rank3.json)")
    List<Path> jmh = new ArrayList<>();

    @Option(names = "--out", required = true, description = "folder for the report, the charts and the copied raw JSON")
    Path out;

    @Option(names = "--jmh-command", description = "the command that produced the JMH files, for the header")
    String jmhCommand;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the targets")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-rma -n 2), for the header")
    String runCommand;

    /** "rma" or "ccl": the prefix of the copied files and of messages. */
    protected abstract String prefix();

    /** The report's file name in the output folder. */
    protected abstract String markdown();

    /** The report of one run: the sweep, the usable JMH results, the copied raw files and the commands. */
    protected abstract SweepDocument document(SweepResult result, List<JmhResult> jmhResults, List<String> jmhProblems,
                                              List<String> raw, List<String> commands);

    /** The file name the sweep JSON is copied to. */
    protected String sweepFile() {
        return prefix() + "-sweep.json";
    }

    /** A command line for this report, with input errors reported in one line rather than a stack trace. */
    protected static CommandLine commandFor(ReportCommand report) {
        return new CommandLine(report).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println(report.prefix() + "-report: " + e.getMessage());
            return 1;
        });
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        List<String> raw = new ArrayList<>();
        Path sweepCopy = copyInto(sweep, sweepFile());
        raw.add(sweepFile());
        SweepResult result;
        try {
            result = SweepResult.read(sweepCopy);
        } catch (IOException e) {
            throw new IOException(sweep + ": not a readable SweepResult (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }

        List<JmhResult> jmhResults = new ArrayList<>();
        List<String> jmhProblems = new ArrayList<>();
        for (int i = 0; i < jmh.size(); i++) {
            Path file = jmh.get(i);
            int rank = JmhResults.rankOf(file);
            // A rank whose JMH run failed leaves an empty or partial file: the report still stands
            // on the other files and the sweep, and says what is missing.
            if (!Files.isRegularFile(file) || Files.size(file) == 0) {
                jmhProblems.add(file.getFileName() + ": " + (Files.exists(file) ? "empty (that rank's JMH run failed)" : "missing"));
                continue;
            }
            // Without a rank in the name, the position on the command line keeps the copies apart.
            String name = prefix() + (rank >= 0 ? "-jmh-rank" + rank + ".json" : "-jmh-" + i + ".json");
            Path copy = copyInto(file, name);
            raw.add(name);
            try {
                jmhResults.addAll(JmhResults.read(copy, rank));
            } catch (IOException e) {
                jmhProblems.add(file.getFileName() + ": unreadable (" + e.getMessage().replace('\n', ' ') + ")");
            }
        }
        jmhProblems.forEach(p -> System.err.println(prefix() + "-report: JMH " + p));

        List<String> commands = new ArrayList<>();
        if (jmhCommand != null && !jmhCommand.isBlank()) {
            commands.add(jmhCommand);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = document(result, jmhResults, jmhProblems, raw, commands).withFindings(findingsText).write(out);
        System.out.println(prefix() + "-report: wrote " + out.resolve(markdown()));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> System.err.println(prefix() + "-report: chart not written: " + e));
            return EXIT_NO_CHARTS;
        }
        return 0;
    }

    /** Copies {@code source} to {@code out/name} unless it already is that file. */
    private Path copyInto(Path source, String name) throws IOException {
        Path target = out.resolve(name);
        if (!Files.exists(source)) {
            throw new IOException(source + ": no such file");
        }
        if (!Files.exists(target) || !Files.isSameFile(source, target)) {
            Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }
}

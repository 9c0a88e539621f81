package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
        RawFiles raw = new RawFiles(out, prefix());
        Path sweepCopy = raw.copy(sweep, sweepFile());
        SweepResult result;
        try {
            result = SweepResult.read(sweepCopy);
        } catch (IOException e) {
            throw new IOException(sweep + ": not a readable SweepResult (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
        RawFiles.Jmh jmhRead = raw.jmh(jmh);
        jmhRead.problems().forEach(p -> System.err.println(prefix() + "-report: JMH " + p));

        List<String> commands = new ArrayList<>();
        if (jmhCommand != null && !jmhCommand.isBlank()) {
            commands.add(jmhCommand);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = document(result, jmhRead.results(), jmhRead.problems(), raw.names(), commands)
                .withFindings(findingsText).write(out);
        System.out.println(prefix() + "-report: wrote " + out.resolve(markdown()));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> System.err.println(prefix() + "-report: chart not written: " + e));
            return EXIT_NO_CHARTS;
        }
        return 0;
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Turns one RMA sweep (and the JMH files of the same run) into {@code rma.md} plus PNG charts,
 * and copies the raw JSON next to them ({@code rma-sweep.json}, {@code rma-jmh-rank0.json}, ...)
 * so the report links to the data it was made from. {@code bin/bench-rma} runs it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.RmaReport \
 *     --sweep /tmp/run/rma-sweep.json --jmh /tmp/run/jmh-rank0.json /tmp/run/jmh-rank1.json \
 *     --jmh-command "bin/iris-run -n 2 -- ..." --out docs/benchmarks
 * </pre>
 *
 * <p>Exit codes: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the Markdown was
 * written but a chart was not (no java.desktop module or no fonts: run it again elsewhere on the
 * copied raw JSON).
 */
@Command(name = "rma-report", mixinStandardHelpOptions = true,
        description = "Writes rma.md and PNG charts from an RMA sweep (and JMH) JSON.")
public final class RmaReport implements Callable<Integer> {
    /** Exit code when the Markdown was written but a chart was not. */
    public static final int EXIT_NO_CHARTS = 3;
    public static final String SWEEP_FILE = "rma-sweep.json";

    @Option(names = "--sweep", required = true, description = "SweepResult JSON written by RmaSweep")
    Path sweep;

    @Option(names = "--jmh", arity = "1..*", description = "JMH -rf json file(s), one per rank; the rank is read from the name (…rank3.json)")
    List<Path> jmh = new ArrayList<>();

    @Option(names = "--out", required = true, description = "folder for rma.md, the charts and the copied raw JSON")
    Path out;

    @Option(names = "--jmh-command", description = "the command that produced the JMH files, for the header")
    String jmhCommand;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the targets")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-rma -n 2), for the header")
    String runCommand;

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    /** The command line, with input errors reported in one line rather than a stack trace. */
    public static CommandLine command() {
        return new CommandLine(new RmaReport()).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println("rma-report: " + e.getMessage());
            return 1;
        });
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        List<String> raw = new ArrayList<>();
        Path sweepCopy = copyInto(sweep, SWEEP_FILE);
        raw.add(SWEEP_FILE);
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
            String name = rank >= 0 ? "rma-jmh-rank" + rank + ".json" : "rma-jmh-" + i + ".json";
            Path copy = copyInto(file, name);
            raw.add(name);
            try {
                jmhResults.addAll(JmhResults.read(copy, rank));
            } catch (IOException e) {
                jmhProblems.add(file.getFileName() + ": unreadable (" + e.getMessage().replace('\n', ' ') + ")");
            }
        }
        jmhProblems.forEach(p -> System.err.println("rma-report: JMH " + p));

        List<String> commands = new ArrayList<>();
        if (jmhCommand != null && !jmhCommand.isBlank()) {
            commands.add(jmhCommand);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = new RmaDocument(result, jmhResults, jmhProblems, raw, runCommand, commands)
                .withFindings(findingsText).write(out);
        PrintWriter err = new PrintWriter(System.err, true);
        System.out.println("rma-report: wrote " + out.resolve(RmaDocument.MARKDOWN));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> err.println("rma-report: chart not written: " + e));
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

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
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Turns one collectives sweep ({@link dev.irisjvm.bench.ccl.CclSweep}) and the JMH files of the
 * same run into {@code collectives.md} plus PNG charts, and copies the raw JSON next to them
 * ({@value #SWEEP_FILE}, {@code ccl-jmh-rank0.json}, ...) so the report links to the data it was
 * made from. {@code bin/bench-ccl} runs it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.CclReport \
 *     --sweep /tmp/run/ccl-sweep.json --jmh /tmp/run/jmh-rank0.json /tmp/run/jmh-rank1.json --out docs/benchmarks
 * </pre>
 *
 * <p>Exit codes: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the Markdown was
 * written but a chart was not (no java.desktop module or no fonts: run it again elsewhere on the
 * copied raw JSON).
 */
@Command(name = "ccl-report", mixinStandardHelpOptions = true,
        description = "Writes collectives.md and PNG charts from a collectives sweep (and JMH) JSON.")
public final class CclReport implements Callable<Integer> {
    public static final int EXIT_NO_CHARTS = 3;
    public static final String SWEEP_FILE = "ccl-sweep.json";

    @Option(names = "--sweep", required = true, description = "SweepResult JSON written by CclSweep")
    Path sweep;

    @Option(names = "--jmh", arity = "1..*", description = "JMH -rf json file(s), one per rank; the rank is read from the name (…rank3.json)")
    List<Path> jmh = new ArrayList<>();

    @Option(names = "--out", required = true, description = "folder for collectives.md, the charts and the copied raw JSON")
    Path out;

    @Option(names = "--jmh-command", description = "the command that produced the JMH files, for the header")
    String jmhCommand;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the targets")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-ccl -n 2), for the header")
    String runCommand;

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    /** The command line, with input errors reported in one line rather than a stack trace. */
    public static CommandLine command() {
        return new CommandLine(new CclReport()).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println("ccl-report: " + e.getMessage());
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
            if (!Files.isRegularFile(file) || Files.size(file) == 0) {
                jmhProblems.add(file.getFileName() + ": " + (Files.exists(file) ? "empty (that rank's JMH run failed)" : "missing"));
                continue;
            }
            String name = rank >= 0 ? "ccl-jmh-rank" + rank + ".json" : "ccl-jmh-" + i + ".json";
            Path copy = copyInto(file, name);
            raw.add(name);
            try {
                jmhResults.addAll(JmhResults.read(copy, rank));
            } catch (IOException e) {
                jmhProblems.add(file.getFileName() + ": unreadable (" + e.getMessage().replace('\n', ' ') + ")");
            }
        }
        jmhProblems.forEach(p -> System.err.println("ccl-report: JMH " + p));

        List<String> commands = new ArrayList<>();
        if (jmhCommand != null && !jmhCommand.isBlank()) {
            commands.add(jmhCommand);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = new CclDocument(result, jmhResults, jmhProblems, raw, runCommand, commands)
                .withFindings(findingsText).write(out);
        System.out.println("ccl-report: wrote " + out.resolve(CclDocument.MARKDOWN));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> System.err.println("ccl-report: chart not written: " + e));
            return EXIT_NO_CHARTS;
        }
        return 0;
    }

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

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.AttentionBenchResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Turns one attention benchmark run ({@link dev.irisjvm.bench.attention.AttentionBench}) into
 * {@code attention.md} plus PNG charts, with the raw JSON copied next to them ({@value #RESULT_FILE}).
 * {@code bin/bench-attention} runs it last; {@code --report-only} runs it alone on the copied JSON
 * (e.g. where the runtime has java.desktop for the charts).
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.AttentionReport --result /tmp/run/attention-bench.json --out docs/benchmarks
 * </pre>
 *
 * <p>Exit codes, as the other reports: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the
 * Markdown was written but a chart was not (no java.desktop module or no fonts).
 */
@Command(name = "attention-report", mixinStandardHelpOptions = true,
        description = "Writes attention.md and PNG charts from an attention benchmark JSON.")
public final class AttentionReport implements Callable<Integer> {
    public static final String RESULT_FILE = "attention-bench.json";

    @Option(names = "--result", required = true, description = "AttentionBenchResult JSON written by AttentionBench")
    Path result;

    @Option(names = "--out", required = true, description = "folder for the report, the charts and the copied raw JSON")
    Path out;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the target table")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-attention), for the header")
    String runCommand;

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    public static CommandLine command() {
        return new CommandLine(new AttentionReport()).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println("attention-report: " + e.getMessage());
            return 1;
        });
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        RawFiles raw = new RawFiles(out, "attention");
        Path copy = raw.copy(result, RESULT_FILE);
        AttentionBenchResult run;
        try {
            run = AttentionBenchResult.read(copy);
        } catch (IOException e) {
            throw new IOException(result + ": not a readable AttentionBenchResult (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = new AttentionDocument(run, raw.names(), runCommand, findingsText).write(out);
        System.out.println("attention-report: wrote " + out.resolve(AttentionDocument.MARKDOWN));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> System.err.println("attention-report: chart not written: " + e));
            return ReportCommand.EXIT_NO_CHARTS;
        }
        return 0;
    }
}

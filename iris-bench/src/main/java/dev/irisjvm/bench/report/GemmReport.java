package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.GemmSweepResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Turns one GEMM sweep ({@link dev.irisjvm.bench.gemm.GemmSweep}) into {@code gemm.md} plus a PNG
 * chart, with the raw JSON copied next to them ({@value #SWEEP_FILE}). {@code bin/bench-gemm} runs
 * it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.GemmReport --sweep /tmp/run/gemm-sweep.json --out docs/benchmarks
 * </pre>
 *
 * <p>Exit codes, as the other reports: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the
 * Markdown was written but the chart was not (no java.desktop module or no fonts).
 */
@Command(name = "gemm-report", mixinStandardHelpOptions = true,
        description = "Writes gemm.md and a PNG chart from a GEMM sweep JSON.")
public final class GemmReport implements Callable<Integer> {
    public static final String SWEEP_FILE = "gemm-sweep.json";

    @Option(names = "--sweep", required = true, description = "GemmSweepResult JSON written by GemmSweep")
    Path sweep;

    @Option(names = "--out", required = true, description = "folder for the report, the chart and the copied raw JSON")
    Path out;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the target table")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-gemm), for the header")
    String runCommand;

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    public static CommandLine command() {
        return new CommandLine(new GemmReport()).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println("gemm-report: " + e.getMessage());
            return 1;
        });
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        RawFiles raw = new RawFiles(out, "gemm");
        Path copy = raw.copy(sweep, SWEEP_FILE);
        GemmSweepResult result;
        try {
            result = GemmSweepResult.read(copy);
        } catch (IOException e) {
            throw new IOException(sweep + ": not a readable GemmSweepResult (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> chartErrors = new GemmDocument(result, raw.names(), runCommand, findingsText).write(out);
        System.out.println("gemm-report: wrote " + out.resolve(GemmDocument.MARKDOWN));
        if (!chartErrors.isEmpty()) {
            chartErrors.forEach(e -> System.err.println("gemm-report: chart not written: " + e));
            return ReportCommand.EXIT_NO_CHARTS;
        }
        return 0;
    }
}

package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.FusedSweepResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.zip.GZIPOutputStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Turns one fused sweep ({@link dev.irisjvm.bench.fused.FusedSweep}) into {@code fused.md}, a
 * speedup chart and one PNG timeline per traced call, with the raw JSON (the sweep as {@value
 * #SWEEP_FILE} and its Chrome traces) copied next to them. {@code bin/bench-fused} runs it last.
 *
 * <pre>
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.report.FusedReport --sweep /tmp/run/fused-sweep.json --out docs/benchmarks
 * </pre>
 *
 * <p>Exit codes, as the other reports: 0 written; 1 bad input (unreadable JSON); 2 bad usage; 3 the
 * Markdown was written but a picture was not (no java.desktop module or no fonts).
 */
@Command(name = "fused-report", mixinStandardHelpOptions = true,
        description = "Writes fused.md, a speedup chart and trace timelines from a fused sweep JSON.")
public final class FusedReport implements Callable<Integer> {
    public static final String SWEEP_FILE = "fused-sweep.json";

    @Option(names = "--sweep", required = true, description = "FusedSweepResult JSON written by FusedSweep")
    Path sweep;

    @Option(names = "--traces", description = "folder of the sweep's Chrome traces (default: the sweep JSON's folder)")
    Path traces;

    @Option(names = "--out", required = true, description = "folder for the report, the pictures and the copied raw JSON")
    Path out;

    @Option(names = "--findings", description = "Markdown with the analysis of this run, included after the targets")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (e.g. bin/bench-fused -n 2), for the header")
    String runCommand;

    @Option(names = "--jmh", arity = "1..*", description = "FusedBenchmark JMH -rf json file(s), one per rank (…rank3.json)")
    List<Path> jmh = new ArrayList<>();

    @Option(names = "--jmh-command", description = "the command that produced the JMH files, for the header")
    String jmhCommand;

    public static void main(String[] args) {
        System.exit(command().execute(args));
    }

    public static CommandLine command() {
        return new CommandLine(new FusedReport()).setExecutionExceptionHandler((e, cl, parsed) -> {
            cl.getErr().println("fused-report: " + e.getMessage());
            return 1;
        });
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(out);
        RawFiles raw = new RawFiles(out, "fused");
        Path copy = raw.copy(sweep, SWEEP_FILE);
        FusedSweepResult result;
        try {
            result = FusedSweepResult.read(copy);
        } catch (IOException e) {
            throw new IOException(sweep + ": not a readable FusedSweepResult (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
        Path traceDir = traces != null ? traces : sweep.toAbsolutePath().getParent();
        for (FusedSweepResult.Trace t : result.traces() == null ? List.<FusedSweepResult.Trace>of() : result.traces()) {
            Path source = traceDir == null ? Path.of(t.file()) : traceDir.resolve(t.file());
            String stored = ChromeTrace.storedName(t.file());
            if (Files.exists(source)) {
                gzipInto(source, stored);
                if (source.toAbsolutePath().getParent().equals(out.toAbsolutePath())) {
                    Files.delete(source);  // the report's own plain copy from an earlier run: the gzipped one replaces it
                }
                raw.add(stored);
            } else if (Files.exists(out.resolve(stored))) {
                raw.add(stored);
            } else {
                System.err.println("fused-report: trace " + source + " missing");
            }
        }
        RawFiles.Jmh jmhRead = raw.jmh(jmh);
        String findingsText = findings == null ? "" : Files.readString(findings);
        List<String> errors = new FusedDocument(result, raw.names(), runCommand, findingsText)
                .withJmh(jmhRead.results(), jmhRead.problems(), jmhCommand).write(out);
        System.out.println("fused-report: wrote " + out.resolve(FusedDocument.MARKDOWN));
        if (!errors.isEmpty()) {
            errors.forEach(e -> System.err.println("fused-report: picture not written: " + e));
            return ReportCommand.EXIT_NO_CHARTS;
        }
        return 0;
    }

    private void gzipInto(Path source, String name) throws IOException {
        try (OutputStream to = new GZIPOutputStream(Files.newOutputStream(out.resolve(name)))) {
            Files.copy(source, to);
        }
    }
}

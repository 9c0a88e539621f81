package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.results.StoredResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/**
 * Renders any report from its raw JSON: copies the JSON (and the JMH files and traces of the same
 * run) next to the report so that it links to the data it was made from, then writes the
 * Markdown and the charts through the kind's document.
 *
 * <pre>{@code
 * ReportInput in = new ReportInput(ReportKind.GEMM, Path.of("docs/benchmarks"), Path.of("/tmp/run/gemm-sweep.json"),
 *         List.of(), null, "bin/iris-bench gemm", null, null, BenchmarkTargets.builtIn());
 * List<String> chartErrors = Report.write(in);   // empty when every chart was drawn
 * }</pre>
 */
public final class Report {
    /** Exit code when the Markdown was written but a chart was not (no java.desktop module or no fonts). */
    public static final int EXIT_NO_CHARTS = 3;

    private Report() {}

    /**
     * Writes the report; returns why charts could not be drawn (empty if all were). A kind whose
     * report stands without a run ({@link ReportKind#runOptional()}) takes a null sweep.
     */
    public static List<String> write(ReportInput in) throws IOException {
        Path out = in.out();
        Files.createDirectories(out);
        ReportKind kind = in.kind();
        RawFiles raw = new RawFiles(out, kind.prefix());
        Path copy = in.sweep() == null && kind.runOptional() ? null : raw.copy(in.sweep(), kind.sweepFile());
        String findings = in.findings() == null ? "" : Files.readString(in.findings());
        StoredResult run = copy == null ? null : read(copy, in.sweep(), kind.runType());
        if (run instanceof FusedSweepResult fused) {
            copyTraces(fused, in, raw);
        }
        RawFiles.Jmh jmh = kind.readsJmh() ? jmh(raw, in) : new RawFiles.Jmh(List.of(), List.of());
        // A report that shows no JMH results lists no JMH command among the commands that made it.
        Document.Context context = new Document.Context(raw.names(), in.runCommand(), findings, in.targets(), jmh.results(),
                jmh.problems(), kind.readsJmh() ? in.jmhCommand() : null);
        return kind.document(run, context).write(out);
    }

    private static <T> T read(Path copy, Path original, Class<T> type) throws IOException {
        try {
            return StoredResult.read(copy, type);
        } catch (IOException e) {
            throw new IOException(original + ": not a readable run JSON (" + e.getMessage().lines().findFirst().orElse("") + ")", e);
        }
    }

    private static RawFiles.Jmh jmh(RawFiles raw, ReportInput in) throws IOException {
        RawFiles.Jmh read = raw.jmh(in.jmh());
        read.problems().forEach(p -> System.err.println(in.kind().prefix() + "-report: JMH " + p));
        return read;
    }

    /** The sweep's Chrome traces, gzipped beside the report. */
    private static void copyTraces(FusedSweepResult sweep, ReportInput in, RawFiles raw) throws IOException {
        Path traceDir = in.traces() != null ? in.traces() : in.sweep().toAbsolutePath().getParent();
        for (FusedSweepResult.Trace t : sweep.traces() == null ? List.<FusedSweepResult.Trace>of() : sweep.traces()) {
            Path source = traceDir == null ? Path.of(t.file()) : traceDir.resolve(t.file());
            String stored = ChromeTrace.storedName(t.file());
            if (Files.exists(source)) {
                try (OutputStream to = new GZIPOutputStream(Files.newOutputStream(in.out().resolve(stored)))) {
                    Files.copy(source, to);
                }
                if (source.toAbsolutePath().getParent().equals(in.out().toAbsolutePath())) {
                    Files.delete(source);  // the report's own plain copy from an earlier run: the gzipped one replaces it
                }
                raw.add(stored);
            } else if (Files.exists(in.out().resolve(stored))) {
                raw.add(stored);
            } else {
                System.err.println("fused-report: trace " + source + " missing");
            }
        }
    }
}

package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What every report is: a Markdown file ({@link ReportKind#markdown()}) and its charts, written
 * into a folder from the raw files already copied there ({@link Report} copies them), which the
 * header links, with the command that ran everything.
 */
public abstract class Document {
    protected final ReportKind kind;
    protected final List<String> rawFiles;
    protected final String runCommand;

    /**
     * @param rawFiles   names (relative to the output folder) of the raw JSON files to link
     * @param runCommand the one command that ran everything (bin/iris-bench ...), or null
     */
    protected Document(ReportKind kind, List<String> rawFiles, String runCommand) {
        this.kind = kind;
        this.rawFiles = List.copyOf(rawFiles);
        this.runCommand = runCommand;
    }

    /** Writes the Markdown and the charts; returns why charts could not be written (empty if all were). */
    public final List<String> write(Path outDir) throws IOException {
        Files.createDirectories(outDir);
        Charts charts = new Charts(outDir, kind);
        Files.writeString(outDir.resolve(kind.markdown()), markdown(charts), StandardCharsets.UTF_8);
        return charts.errors();
    }

    /** The report's Markdown; its charts are drawn through {@code charts}. */
    abstract String markdown(Charts charts);

    /** The header of a report whose benchmark has not run yet: what is pending and the command that measures it. */
    String pendingHeader(String title, String intro, String measurements, String command) {
        return new ReportHeader(title, intro, null).item("measurements", measurements)
                .end(rawFiles, "Command (not run yet)", null, List.of(command));
    }

    /** A report without a run: its header, what the benchmark measures (its {@code method}, retitled) and the findings. */
    String pending(String title, String intro, String measurements, String command, String method, String findings) {
        return pendingHeader(title, intro, measurements, command) + method.replace("## Method", "## What the benchmark measures")
                + findings;
    }

    /** {@link #pending} of a comparison that needs two GPUs. */
    String pendingOnTwoGpus(String title, String intro, String command, String method, String findings) {
        return pending(title, intro + " The comparison is pending a run on two GPUs: nothing has been measured yet.",
                "pending a run on two GPUs: `" + command + "`", command, method, findings);
    }

    /** The section that closes a report: each failed check on a line of its own, or {@code allPassed} where none failed. */
    static String outputChecks(String heading, List<String> failures, String allPassed) {
        return "## " + heading + "\n\n" + (failures.isEmpty() ? allPassed : String.join("\n", failures)) + "\n";
    }
}

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
}

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
    protected final Context context;
    /** The hand-written findings as their section, or "". */
    protected final String findings;

    /**
     * What a document shows besides its run.
     *
     * @param rawFiles    names (relative to the output folder) of the raw JSON files to link
     * @param runCommand  the one command that ran everything (bin/iris-bench ...), or null
     * @param findings    hand-written Markdown placed after the targets, or null
     * @param jmh         the JMH results of the same run (ccl, fused, rma), one file per rank
     * @param jmhProblems JMH files that could not be used, and why
     * @param jmhCommand  the command that produced the JMH files, or null
     */
    public record Context(List<String> rawFiles, String runCommand, String findings, BenchmarkTargets targets, List<JmhResult> jmh,
                          List<String> jmhProblems, String jmhCommand) {
        public Context {
            rawFiles = List.copyOf(rawFiles);
            findings = findings == null ? "" : findings;
            jmh = List.copyOf(jmh);
            jmhProblems = List.copyOf(jmhProblems);
        }

        /** A document's context where only its targets matter: the status section's and the tests'. */
        public static Context of(BenchmarkTargets targets) {
            return new Context(List.of(), null, null, targets, List.of(), List.of(), null);
        }

        /** The JMH command as the list of commands run after the sweep's own: empty where there is none. */
        List<String> jmhCommands() {
            return jmhCommand == null || jmhCommand.isBlank() ? List.of() : List.of(jmhCommand);
        }
    }

    protected Document(ReportKind kind, Context context) {
        this.kind = kind;
        this.context = context;
        this.findings = ReportHeader.findings(context.findings());
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
                .end(context.rawFiles(), "Command (not run yet)", null, List.of(command));
    }

    /** A report without a run: its header, what the benchmark measures (its {@code method}, retitled) and the findings. */
    String pending(String title, String intro, String measurements, String command, String method) {
        return pendingHeader(title, intro, measurements, command) + method.replace("## Method", "## What the benchmark measures")
                + findings;
    }

    /** {@link #pending} of a comparison that needs two GPUs. */
    String pendingOnTwoGpus(String title, String intro, String command, String method) {
        return pending(title, intro + " The comparison is pending a run on two GPUs: nothing has been measured yet.",
                "pending a run on two GPUs: `" + command + "`", command, method);
    }

    /** The section that closes a report: each failed check on a line of its own, or {@code allPassed} where none failed. */
    static String outputChecks(String heading, List<String> failures, String allPassed) {
        return "## " + heading + "\n\n" + (failures.isEmpty() ? allPassed : String.join("\n", failures)) + "\n";
    }
}

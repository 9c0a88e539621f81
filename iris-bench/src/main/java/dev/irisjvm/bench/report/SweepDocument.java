package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * What the benchmark reports share: the sweep, the JMH results of the same run, the raw files to
 * link, the commands that produced them, and an optional hand-written findings section placed
 * right after the targets. Subclasses lay out the rest ({@link RmaDocument}, {@link CclDocument}).
 */
public abstract class SweepDocument {
    protected final SweepResult sweep;
    protected final BenchmarkTargets targets;
    protected final List<JmhResult> jmh;
    protected final List<String> jmhProblems;
    protected final List<String> rawFiles;
    protected final String runCommand;
    protected final List<String> extraCommands;
    protected String findings = "";

    /**
     * @param jmhProblems   JMH files that could not be used, and why (shown in the JMH section)
     * @param rawFiles      names (relative to the output folder) of the raw JSON files to link
     * @param runCommand    the one command that ran everything (bin/iris-bench rma ...), or null
     * @param extraCommands commands besides the sweep's own, in the order they ran (e.g. the JMH one)
     */
    protected SweepDocument(SweepResult sweep, BenchmarkTargets targets, List<JmhResult> jmh, List<String> jmhProblems,
                            List<String> rawFiles, String runCommand, List<String> extraCommands) {
        this.sweep = sweep;
        this.targets = targets;
        this.jmh = List.copyOf(jmh);
        this.jmhProblems = List.copyOf(jmhProblems);
        this.rawFiles = List.copyOf(rawFiles);
        this.runCommand = runCommand;
        this.extraCommands = List.copyOf(extraCommands);
    }

    /** Hand-written analysis (Markdown) placed right after the targets: what the misses mean, what was tried. */
    public SweepDocument withFindings(String markdown) {
        this.findings = markdown == null || markdown.isBlank() ? "" : "## Findings\n\n" + markdown.strip() + "\n\n";
        return this;
    }

    /** Writes the Markdown and the charts; returns why charts could not be written (empty if all were). */
    public abstract List<String> write(Path outDir) throws IOException;

    /** A "- **name**: value" line of the header. */
    protected static void item(StringBuilder sb, String name, String value) {
        sb.append("- **").append(name).append("**: ").append(value).append('\n');
    }

    protected static String orDash(String s) {
        return s == null || s.isBlank() ? "—" : s;
    }
}

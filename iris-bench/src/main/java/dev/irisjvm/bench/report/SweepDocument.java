package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.util.ArrayList;
import java.util.List;

/**
 * What the benchmark reports share: the sweep, the JMH results of the same run, the raw files to
 * link, the commands that produced them, and an optional hand-written findings section placed
 * right after the targets. Subclasses lay out the rest ({@link RmaDocument}, {@link CclDocument}).
 */
public abstract class SweepDocument extends Document {
    protected final SweepResult sweep;
    protected final BenchmarkTargets targets;
    protected final List<JmhResult> jmh;
    protected final List<String> jmhProblems;
    protected final List<String> extraCommands;
    protected String findings = "";

    /**
     * @param jmhProblems   JMH files that could not be used, and why (shown in the JMH section)
     * @param extraCommands commands besides the sweep's own, in the order they ran (e.g. the JMH one)
     */
    protected SweepDocument(ReportKind kind, SweepResult sweep, BenchmarkTargets targets, List<JmhResult> jmh,
                            List<String> jmhProblems, List<String> rawFiles, String runCommand, List<String> extraCommands) {
        super(kind, rawFiles, runCommand);
        this.sweep = sweep;
        this.targets = targets;
        this.jmh = List.copyOf(jmh);
        this.jmhProblems = List.copyOf(jmhProblems);
        this.extraCommands = List.copyOf(extraCommands);
    }

    /** Hand-written analysis (Markdown) placed right after the targets: what the misses mean, what was tried. */
    public SweepDocument withFindings(String markdown) {
        this.findings = ReportHeader.findings(markdown);
        return this;
    }

    /** The header's items after the report's own: the raw files and the commands, in the order they ran. */
    String headerEnd(ReportHeader header) {
        List<String> ran = new ArrayList<>();
        if (sweep.command() != null && !sweep.command().isBlank()) {
            ran.add(sweep.command());
        }
        ran.addAll(extraCommands);
        return header.end(rawFiles, "Commands, in the order they ran", runCommand, ran.isEmpty() ? List.of("(not recorded)") : ran);
    }
}

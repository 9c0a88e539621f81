package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.SweepResult;
import java.util.ArrayList;
import java.util.List;

/**
 * The reports of a size sweep with the JMH results of the same run ({@link RmaDocument},
 * {@link CclDocument}): their header lists the sweep's command and the JMH one, in the order they ran.
 */
public abstract class SweepDocument extends Document {
    protected final SweepResult sweep;
    protected final List<JmhResult> jmh;
    protected final List<String> jmhProblems;

    protected SweepDocument(ReportKind kind, SweepResult sweep, Context context) {
        super(kind, context);
        this.sweep = sweep;
        this.jmh = context.jmh();
        this.jmhProblems = context.jmhProblems();
    }

    /** The header's items after the report's own: the raw files and the commands, in the order they ran. */
    String headerEnd(ReportHeader header) {
        List<String> ran = new ArrayList<>();
        if (sweep.command() != null && !sweep.command().isBlank()) {
            ran.add(sweep.command());
        }
        ran.addAll(context.jmhCommands());
        return header.end(context.rawFiles(), "Commands, in the order they ran", context.runCommand(), ran.isEmpty() ? List.of("(not recorded)") : ran);
    }
}

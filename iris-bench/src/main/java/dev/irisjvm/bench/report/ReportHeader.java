package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.StoredResult;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The top of every report: the title, what was measured, a list of the run's facts (date,
 * hardware, software first, then the report's own, then the raw files and when the report was
 * written) and the commands that produced the data.
 *
 * <pre>{@code
 * String md = new ReportHeader("Iris GEMM benchmarks", "The GEMM of ...", sweep)
 *         .item("shapes", "7")
 *         .end(context, sweep.command());
 * }</pre>
 */
final class ReportHeader {
    private final StringBuilder sb = new StringBuilder();

    /** @param run the run the report shows, or null for a report written before any run (its facts are dashes) */
    ReportHeader(String title, String intro, StoredResult run) {
        sb.append("# ").append(title).append("\n\n").append(intro).append("\n\n");
        item("date (UTC)", orDash(run == null ? null : run.date())).item("hardware", orDash(run == null ? null : run.hardware()))
                .item("software", orDash(run == null ? null : run.software()));
    }

    /** A "- **name**: value" line. */
    ReportHeader item(String name, String value) {
        sb.append("- **").append(name).append("**: ").append(value).append('\n');
        return this;
    }

    /**
     * The raw files' links, the time of writing and the commands block: {@code runCommand} (the
     * one command that ran everything, when there is one) and below it the commands it ran.
     */
    String end(List<String> rawFiles, String heading, String runCommand, List<String> ran) {
        item("raw data", rawFiles.isEmpty() ? "—" : rawFiles.stream().map(f -> "[" + f + "](" + f + ")").collect(Collectors.joining(", ")));
        item("report written", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        sb.append('\n').append(heading).append(":\n\n```\n");
        if (runCommand != null && !runCommand.isBlank()) {
            sb.append(runCommand).append("\n# which ran:\n");
        }
        return sb.append(String.join("\n", ran)).append("\n```\n\n").toString();
    }

    /** {@link #end} with the command the run recorded, or "(not recorded)", then the JMH command of the same run where there is one. */
    String end(Document.Context context, String command) {
        List<String> ran = new ArrayList<>(List.of(command == null || command.isBlank() ? "(not recorded)" : command));
        ran.addAll(context.jmhCommands());
        return end(context.rawFiles(), "Commands", context.runCommand(), ran);
    }

    /** Hand-written findings as their section, or "" when there are none. */
    static String findings(String markdown) {
        return markdown == null || markdown.isBlank() ? "" : "## Findings\n\n" + markdown.strip() + "\n\n";
    }

    static String orDash(String s) {
        return s == null || s.isBlank() ? "—" : s;
    }
}

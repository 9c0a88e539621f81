package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Writes {@value #MARKDOWN} and its charts into a folder from one sweep and the JMH results of
 * the same run. The raw files it links to must already be in that folder ({@link RmaReport}
 * copies them there).
 *
 * <pre>{@code
 * RmaDocument doc = new RmaDocument(sweep, jmhResults, List.of(), List.of("rma-sweep.json", "rma-jmh-rank0.json"),
 *         "bin/bench-rma -n 2", List.of(jmhCommand));
 * List<String> chartErrors = doc.write(Path.of("docs/benchmarks"));
 * }</pre>
 */
public final class RmaDocument {
    public static final String MARKDOWN = "rma.md";

    private final SweepResult sweep;
    private final List<JmhResult> jmh;
    private final List<String> jmhProblems;
    private final List<String> rawFiles;
    private final String runCommand;
    private final List<String> extraCommands;

    /**
     * @param jmhProblems   JMH files that could not be used, and why (shown in the JMH section)
     * @param rawFiles      names (relative to the output folder) of the raw JSON files to link
     * @param runCommand    the one command that ran everything (bin/bench-rma ...), or null
     * @param extraCommands commands besides the sweep's own, in the order they ran (e.g. the JMH one)
     */
    public RmaDocument(SweepResult sweep, List<JmhResult> jmh, List<String> jmhProblems, List<String> rawFiles,
                       String runCommand, List<String> extraCommands) {
        this.sweep = sweep;
        this.jmh = List.copyOf(jmh);
        this.jmhProblems = List.copyOf(jmhProblems);
        this.rawFiles = List.copyOf(rawFiles);
        this.runCommand = runCommand;
        this.extraCommands = List.copyOf(extraCommands);
    }

    private String findings = "";

    /** Hand-written analysis (Markdown) placed right after the targets: what the misses mean, what was tried. */
    public RmaDocument withFindings(String markdown) {
        this.findings = markdown == null || markdown.isBlank() ? "" : "## Findings\n\n" + markdown.strip() + "\n\n";
        return this;
    }

    /** Writes the Markdown and the charts; returns why charts could not be written (empty if all were). */
    public List<String> write(Path outDir) throws IOException {
        Files.createDirectories(outDir);
        SweepIndex index = new SweepIndex(sweep.measurements() == null ? List.of() : sweep.measurements());
        SizeTables sizes = new SizeTables(index, outDir);
        String md = header(index)
                + Targets.section(Targets.evaluate(index, jmh))
                + findings
                + Floors.section(index)
                + sizes.bandwidthSection()
                + sizes.latencySection()
                + sizes.atomicsSection()
                + RankMatrix.section(index)
                + JmhTable.section(jmh, jmhProblems)
                + checks(index);
        Files.writeString(outDir.resolve(MARKDOWN), md, StandardCharsets.UTF_8);
        return sizes.chartErrors();
    }

    private String header(SweepIndex index) {
        StringBuilder sb = new StringBuilder("# Iris RMA benchmarks\n\n");
        sb.append("Host-initiated one-sided tile operations (`RemoteTile.loadRemote/storeRemote/atomicAdd`), "
                + "device-side message passing and `Iris.barrier()`, against the copy engine and NCCL measured "
                + "in the same run.\n\n");
        item(sb, "date (UTC)", orDash(sweep.date()));
        item(sb, "hardware", orDash(sweep.hardware()));
        item(sb, "software", orDash(sweep.software()));
        item(sb, "world size", sweep.worldSize() + " rank(s)" + (index.ranks().isEmpty() ? "" : ", ranks seen "
                + index.ranks().stream().map(String::valueOf).collect(Collectors.joining(", "))));
        item(sb, "measurements", String.valueOf(index.all().size()));
        item(sb, "raw data", rawFiles.isEmpty() ? "—"
                : rawFiles.stream().map(f -> "[" + f + "](" + f + ")").collect(Collectors.joining(", ")));
        item(sb, "report written", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        sb.append("\nCommands, in the order they ran:\n\n```\n");
        if (runCommand != null && !runCommand.isBlank()) {
            sb.append(runCommand).append("\n# which ran:\n");
        }
        List<String> commands = new ArrayList<>();
        if (sweep.command() != null && !sweep.command().isBlank()) {
            commands.add(sweep.command());
        }
        commands.addAll(extraCommands);
        sb.append(commands.isEmpty() ? "(not recorded)" : String.join("\n", commands)).append("\n```\n\n");
        return sb.toString();
    }

    /** Lists every point whose data did not verify: a fast wrong answer is not a result. */
    private static String checks(SweepIndex index) {
        StringBuilder sb = new StringBuilder("## Data checks\n\n");
        List<Measurement> bad = index.all().stream().filter(m -> !"ok".equals(m.check())).collect(Collectors.toList());
        long unchecked = bad.stream().filter(m -> m.check() == null).count();
        if (bad.isEmpty()) {
            return sb.append("Every one of the ").append(index.all().size())
                    .append(" measurements verified its data after the timed runs (check = ok).\n\n").toString();
        }
        MarkdownTable t = new MarkdownTable("series", "size", "issuer", "peer", "check");
        bad.forEach(m -> t.row(new Series(m.op(), m.impl()).label(), Sizes.bytes(m.bytes()), m.issuer(),
                m.peer() < 0 ? "all" : String.valueOf(m.peer()), m.check() == null ? "(none recorded)" : m.check()));
        return sb.append(bad.size() - unchecked).append(" measurement(s) have no verified figure: their check failed or "
                        + "the point could not run (marked")
                .append(RankMatrix.BAD_CHECK).append(" in the matrices and left out of every median and target)")
                .append(unchecked > 0 ? "; " + unchecked + " recorded no check (counted, but unverified)" : "")
                .append(".\n\n").append(t.render()).append('\n').toString();
    }

    private static void item(StringBuilder sb, String name, String value) {
        sb.append("- **").append(name).append("**: ").append(value).append('\n');
    }

    private static String orDash(String s) {
        return s == null || s.isBlank() ? "—" : s;
    }
}

package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.BenchmarkTargets;
import dev.irisjvm.bench.report.Report;
import dev.irisjvm.bench.report.ReportInput;
import dev.irisjvm.bench.report.ReportKind;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code iris-bench report KIND}: renders one report from raw JSON, by default the JSON already in
 * the report's folder (how committed reports are redrawn). Exit codes: 0 written; 1 bad input; 2
 * bad usage; 3 the Markdown was written but a chart was not (no java.desktop module or no fonts).
 */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Renders a report (Markdown and PNG charts) from the raw JSON of a run; measures nothing.")
final class ReportCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "KIND", converter = KindConverter.class,
            description = "gemm, gemm-suite, ccl, fused, attention, rma, jit, moe, training-step or nodes")
    ReportKind kind;

    @Mixin
    ReportFolderOption out = new ReportFolderOption();

    @Option(names = "--sweep", paramLabel = "FILE", description = "the run's JSON (default: DIR/gemm-sweep.json, DIR/gemm-suite.json, DIR/attention-bench.json, ...; jit, moe, training-step and nodes render without one)")
    Path sweep;

    @Option(names = "--jmh", arity = "1..*", paramLabel = "FILE",
            description = "JMH -rf json files, one per rank, rank in the name (…rank3.json) (default: DIR/KIND-jmh-rank*.json)")
    List<Path> jmh;

    @Option(names = "--traces", paramLabel = "DIR", description = "fused: folder of the Chrome traces (default: the JSON's folder)")
    Path traces;

    @Option(names = "--findings", paramLabel = "FILE", description = "Markdown included after the targets (default: DIR's findings file, if any)")
    Path findings;

    @Option(names = "--run-command", description = "the command that ran everything (default: from DIR/KIND-commands.txt)")
    String runCommand;

    @Option(names = "--jmh-command", description = "the command that produced the JMH files (default: from DIR/KIND-commands.txt)")
    String jmhCommand;

    @Option(names = "--targets", paramLabel = "FILE", description = "targets to judge by (default: DIR/targets.json, else the built-in copy)")
    Path targets;

    /** picocli converter: a report kind by name. */
    static final class KindConverter implements picocli.CommandLine.ITypeConverter<ReportKind> {
        @Override
        public ReportKind convert(String value) {
            return ReportKind.of(value);
        }
    }

    @Override
    public Integer call() throws IOException {
        Path dir = out.resolve(BenchHome.current());
        Path json = sweep != null ? sweep : dir.resolve(kind.sweepFile());
        if (!Files.isRegularFile(json)) {
            if (sweep != null || !kind.runOptional()) {
                System.err.println("iris-bench report: " + json + " missing");
                return 2;
            }
            System.out.println("iris-bench report: no " + json + " yet: the report's measured parts say they are pending a run");
            json = null;
        }
        Path commands = dir.resolve(kind.commandsFile());
        ReportInput in = new ReportInput(kind, dir, json, jmh != null ? jmh : filesIn(dir, kind.jmhGlob()), traces,
                runCommand != null ? runCommand : recorded(commands, "run"),
                jmhCommand != null ? jmhCommand : recorded(commands, "jmh"),
                findings != null ? findings : findingsIn(dir, kind),
                targets != null ? BenchmarkTargets.read(targets) : BenchmarkTargets.forFolder(dir));
        return render(in);
    }

    /** Writes the report and says so; the exit code of the report step. */
    static int render(ReportInput in) throws IOException {
        List<String> chartErrors = Report.write(in);
        System.out.println("iris-bench report: wrote " + in.out().resolve(in.kind().markdown()));
        chartErrors.forEach(e -> System.err.println("iris-bench report: chart not written: " + e));
        return chartErrors.isEmpty() ? 0 : Report.EXIT_NO_CHARTS;
    }

    /** The folder's hand-written findings for this kind, or null. */
    static Path findingsIn(Path dir, ReportKind kind) {
        Path f = dir.resolve(kind.findingsFile());
        return Files.isRegularFile(f) ? f : null;
    }

    /** The files of {@code dir} matching {@code glob}, sorted by name. */
    static List<Path> filesIn(Path dir, String glob) throws IOException {
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, glob)) {
                s.forEach(files::add);
            }
        }
        files.sort(null);
        return files;
    }

    /** The {@code key: ...} line of a commands file, or "" when there is none. */
    static String recorded(Path commandsFile, String key) throws IOException {
        if (!Files.isRegularFile(commandsFile)) {
            return "";
        }
        return Files.readAllLines(commandsFile).stream().filter(l -> l.startsWith(key + ": "))
                .map(l -> l.substring(key.length() + 2)).findFirst().orElse("");
    }
}

package dev.irisjvm.bench.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --out DIR}: the folder a report is written to and redrawn from (a picocli mixin of every
 * benchmark command and of {@code report}).
 *
 * <pre>{@code
 * @Mixin ReportFolderOption out = new ReportFolderOption();
 * out.resolve(BenchHome.current());   // --out, else docs/benchmarks of the project
 * }</pre>
 */
final class ReportFolderOption {
    @Option(names = "--out", paramLabel = "DIR", description = "the report's folder (default: docs/benchmarks of the project)")
    Path dir;

    /** --out, else {@code home}'s reports folder. */
    Path resolve(BenchHome home) {
        return dir != null ? dir : home.defaultReports();
    }
}

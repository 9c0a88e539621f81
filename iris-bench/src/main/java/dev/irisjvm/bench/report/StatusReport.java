package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Rewrites README.md's status section ({@link StatusSection}) from the committed raw JSON in
 * docs/benchmarks, or, with {@code --check}, only says whether it is up to date. Run it from the
 * repository root after committing a new run's JSON:
 *
 * <pre>
 * bin/iris-bench status
 * bin/iris-bench status --check
 * </pre>
 *
 * <p>Exit codes: 0 written (or up to date); 1 bad input (unreadable JSON, no markers in the README)
 * or, with {@code --check}, out of date; 2 bad usage.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Writes README.md's status section from the committed benchmark JSON.")
public final class StatusReport implements Callable<Integer> {
    /** The command that regenerates the section, for messages that find it out of date. */
    public static final String COMMAND = "bin/iris-bench status";

    @Option(names = "--readme", defaultValue = "README.md", description = "the README whose status section is rewritten (default: ${DEFAULT-VALUE})")
    Path readme;

    @Option(names = "--benchmarks", defaultValue = "docs/benchmarks",
            description = "the folder of the committed raw JSON and reports (default: ${DEFAULT-VALUE})")
    Path benchmarks;

    @Option(names = "--check", description = "write nothing; exit 1 when the section differs from what the JSON gives")
    boolean check;

    @Override
    public Integer call() throws IOException {
        String text = Files.readString(readme, StandardCharsets.UTF_8);
        String section = StatusSection.render(benchmarks, linkBase(readme, benchmarks));
        if (check) {
            boolean same = StatusSection.extract(text).equals(section);
            System.out.println("status-report: " + readme + (same ? " is up to date" : " differs from the JSON; run " + COMMAND));
            return same ? 0 : 1;
        }
        Files.writeString(readme, StatusSection.splice(text, section), StandardCharsets.UTF_8);
        System.out.println("status-report: wrote the status section of " + readme);
        return 0;
    }

    /** The benchmarks folder as a link from the README's folder, with forward slashes whatever the platform. */
    static String linkBase(Path readme, Path benchmarks) {
        Path from = readme.toAbsolutePath().normalize().getParent();
        return from.relativize(benchmarks.toAbsolutePath().normalize()).toString().replace('\\', '/');
    }
}

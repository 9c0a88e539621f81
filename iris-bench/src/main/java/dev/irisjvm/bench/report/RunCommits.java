package dev.irisjvm.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The commit each committed raw JSON measured, from {@value #FILE} in the benchmarks folder: a
 * sweep records its date, hardware and command but not the build it ran, so whoever commits a run
 * names its commit there (the GPU bundle's {@code COMMIT}). The status section cites runs by file,
 * date and commit, and a test fails where a cited file has no entry.
 *
 * <pre>{@code
 * RunCommits commits = RunCommits.read(Path.of("docs/benchmarks"));
 * commits.of("gemm-sweep.json");   // "0e05a4b"
 * }</pre>
 */
final class RunCommits {
    static final String FILE = "run-commits.json";
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{7,40}");

    private final Map<String, String> commits;

    private RunCommits(Map<String, String> commits) {
        this.commits = Collections.unmodifiableMap(commits);
    }

    /** The folder's {@value #FILE} ({@code {"commits": {"file.json": "abc1234", ...}}}), or none where it has no such file. */
    static RunCommits read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        Map<String, String> commits = new TreeMap<>();
        if (Files.isRegularFile(file)) {
            JsonNode node = new ObjectMapper().readTree(file.toFile()).path("commits");
            node.fields().forEachRemaining(e -> commits.put(e.getKey(), e.getValue().asText()));
        }
        return new RunCommits(commits);
    }

    /** The commit of {@code file}'s run, or null where {@value #FILE} does not name it. */
    String of(String file) {
        return commits.get(file);
    }

    static boolean isHash(String commit) {
        return HASH.matcher(commit).matches();
    }
}

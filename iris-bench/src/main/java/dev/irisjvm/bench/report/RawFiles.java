package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The raw data a report is made from, copied next to it so that the report links to it: the
 * sweep, the JMH files of the same run ({@code <prefix>-jmh-rank0.json}, ...), anything else a
 * report keeps. {@link #names()} lists the copies in the order they were made.
 */
final class RawFiles {
    /** The JMH results that could be read, and what was wrong with the files that could not. */
    record Jmh(List<JmhResult> results, List<String> problems) {}

    private final Path out;
    private final String prefix;
    private final List<String> names = new ArrayList<>();

    RawFiles(Path out, String prefix) {
        this.out = out;
        this.prefix = prefix;
    }

    /** Copies {@code source} to {@code out/name} unless it already is that file; returns the copy. */
    Path copy(Path source, String name) throws IOException {
        Path target = out.resolve(name);
        if (!Files.exists(source)) {
            throw new IOException(source + ": no such file");
        }
        if (!Files.exists(target) || !Files.isSameFile(source, target)) {
            Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
        }
        names.add(name);
        return target;
    }

    /** Records a file that is already in the report's folder. */
    void add(String name) {
        names.add(name);
    }

    /**
     * Copies and reads the JMH files, one per rank (the rank is read from the name, …rank3.json).
     * A rank whose JMH run failed leaves an empty or partial file: the report still stands on the
     * other files and the sweep, and says what is missing.
     */
    Jmh jmh(List<Path> files) throws IOException {
        List<JmhResult> results = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path file = files.get(i);
            int rank = JmhResults.rankOf(file);
            if (!Files.isRegularFile(file) || Files.size(file) == 0) {
                problems.add(file.getFileName() + ": " + (Files.exists(file) ? "empty (that rank's JMH run failed)" : "missing"));
                continue;
            }
            // Without a rank in the name, the position on the command line keeps the copies apart.
            Path copy = copy(file, prefix + (rank >= 0 ? "-jmh-rank" + rank + ".json" : "-jmh-" + i + ".json"));
            try {
                results.addAll(JmhResults.read(copy, rank));
            } catch (IOException e) {
                problems.add(file.getFileName() + ": unreadable (" + e.getMessage().replace('\n', ' ') + ")");
            }
        }
        return new Jmh(results, problems);
    }

    List<String> names() {
        return names;
    }
}

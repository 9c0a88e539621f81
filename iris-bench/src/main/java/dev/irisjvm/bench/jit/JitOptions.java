package dev.irisjvm.bench.jit;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link JitBench}.
 *
 * <pre>{@code
 * JitOptions o = new JitOptions();
 * new CommandLine(o).parseArgs("--sources", "01_load.cu,10_overlap_styles.cu", "--cold-reps", "3");
 * o.validate();
 * o.sources();    // [01_load.cu, 10_overlap_styles.cu]
 * o.variants();   // [false, true]: plain, then checked
 * }</pre>
 */
public final class JitOptions {
    /** Fewest repetitions of a step: a median, a minimum and a maximum of fewer would be the same few numbers. */
    public static final int MIN_REPS = 3;

    @Option(names = "--sources", defaultValue = "all",
            description = "Comma-separated example kernel sources, e.g. 01_load.cu,10_overlap_styles.cu, or all (default: ${DEFAULT-VALUE}).")
    String sources;

    @Option(names = "--cold-reps", defaultValue = "5",
            description = "Compiles per source and variant, each into a fresh cache folder, at least " + MIN_REPS
                    + " (default: ${DEFAULT-VALUE}).")
    int coldReps;

    @Option(names = "--warm-reps", defaultValue = "10",
            description = "Loads per source and variant from the cache the compiles filled, at least " + MIN_REPS
                    + " (default: ${DEFAULT-VALUE}).")
    int warmReps;

    @Option(names = "--plain-only", description = "Leave out the checked variant (IRIS_CHECK, -DIRIS_CHECKED=1).")
    boolean plainOnly;

    @Option(names = "--cache-parent", paramLabel = "DIR",
            description = "Where the fresh cache folders are made, and removed after (default: the system's temporary folder).")
    Path cacheParent;

    @Option(names = "--out", defaultValue = "jit-bench.json", description = "JSON results (default: ${DEFAULT-VALUE}).")
    Path out;

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        sources();
        atLeast("--cold-reps", coldReps, MIN_REPS);
        atLeast("--warm-reps", warmReps, MIN_REPS);
    }

    /** The sources to measure, in example order. */
    public List<String> sources() {
        if (sources.trim().equalsIgnoreCase("all")) {
            return ExampleSource.NAMES;
        }
        List<String> asked = new ArrayList<>();
        for (String name : OptionChecks.items(sources)) {
            require(ExampleSource.NAMES.contains(name), "--sources: '" + name + "' is not an example kernel source; known: "
                    + String.join(", ", ExampleSource.NAMES));
            if (!asked.contains(name)) {
                asked.add(name);
            }
        }
        require(!asked.isEmpty(), "--sources names no source");
        return ExampleSource.NAMES.stream().filter(asked::contains).toList();
    }

    /** The variants to compile: plain (false), then checked (true) unless --plain-only. */
    public List<Boolean> variants() {
        return plainOnly ? List.of(false) : List.of(false, true);
    }

    public int coldReps() {
        return coldReps;
    }

    public int warmReps() {
        return warmReps;
    }

    /** The folder for the fresh caches. */
    public Path cacheParent() {
        return cacheParent != null ? cacheParent : Path.of(System.getProperty("java.io.tmpdir"));
    }

    public Path out() {
        return out;
    }
}

package dev.irisjvm.bench;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --out} of a sweep whose ranks gather their results for rank 0 to write (a picocli mixin).
 * Each sweep names its own default file; it is the field's value, which picocli shows as such.
 *
 * <pre>{@code
 * @Mixin ResultFileOption out = new ResultFileOption("moe-sweep.json");
 * out.path();   // moe-sweep.json, or the file --out names
 * }</pre>
 */
public final class ResultFileOption {
    @Option(names = "--out", description = "JSON results, written by rank 0 (default: ${DEFAULT-VALUE}).")
    Path out;

    /** The default: {@code defaultFile} in the working folder. */
    public ResultFileOption(String defaultFile) {
        this.out = Path.of(defaultFile);
    }

    public Path path() {
        return out;
    }
}

package dev.irisjvm.bench.jit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The committed example kernel sources, read from the source tree rather than the class path (whose jar may be older). */
public final class ExampleSourcesOnDisk {
    /** Where iris-examples keeps them, from iris-bench's folder (the tests' working directory). */
    public static final Path FOLDER = Path.of("../iris-examples/src/main/resources/dev/irisjvm/examples");

    private ExampleSourcesOnDisk() {}

    /** Every source of {@link ExampleSource#NAMES}, as committed. */
    public static List<ExampleSource> read() {
        return ExampleSource.NAMES.stream().map(n -> {
            try {
                return new ExampleSource(n, Files.readString(FOLDER.resolve(n)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).toList();
    }
}

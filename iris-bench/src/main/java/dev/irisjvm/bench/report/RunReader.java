package dev.irisjvm.bench.report;

import java.io.IOException;
import java.nio.file.Path;

/** A run result's own read method ({@code GemmSweepResult::read}, ...), as the report and the status section take it. */
interface RunReader<T> {
    T read(Path file) throws IOException;
}

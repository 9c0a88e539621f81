package dev.irisjvm.bench.cli;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/** Runs a step of a benchmark as a child process whose output goes straight to this one's. */
final class Processes {
    private Processes() {}

    /** Runs {@code command} with {@code environment} added; its exit code. */
    static int run(List<String> command, Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        pb.environment().putAll(environment);
        Process p = pb.start();
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            p.destroy();
            throw e;
        }
    }
}

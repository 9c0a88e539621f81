package dev.irisjvm.bench.cli;

import java.util.ArrayList;
import java.util.List;

/** An {@code iris-bench} command line parsed into its subcommand, which does not run. */
final class ParsedRun {
    private ParsedRun() {}

    /** {@code iris-bench command args...}'s subcommand, as {@code type}. */
    static <T extends BenchRun> T parse(Class<T> type, String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(List.of(args));
        return type.cast(IrisBench.commandLine().parseArgs(all.toArray(String[]::new)).subcommand().commandSpec().userObject());
    }
}

package dev.irisjvm.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/** An {@code iris-bench} command line parsed into its subcommand, which does not run; or a subcommand's help. */
final class ParsedRun {
    private ParsedRun() {}

    /** {@code iris-bench command args...}'s subcommand, as {@code type}. */
    static <T extends BenchRun> T parse(Class<T> type, String command, String... args) {
        List<String> all = new ArrayList<>(List.of(command));
        all.addAll(List.of(args));
        return type.cast(IrisBench.commandLine().parseArgs(all.toArray(String[]::new)).subcommand().commandSpec().userObject());
    }

    /** What {@code iris-bench command --help} prints, each run of white space one space; the command must exit 0. */
    static String help(String command) {
        StringWriter out = new StringWriter();
        assertEquals(0, IrisBench.commandLine().setOut(new PrintWriter(out)).execute(command, "--help"));
        return out.toString().replaceAll("\\s+", " ");
    }
}

package dev.irisjvm.bench.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** {@code --jmh-args}: more JMH options, the same on every rank. */
final class JmhOptions {
    @Option(names = "--jmh-args", paramLabel = "ARGS", description = "more JMH options, split on spaces (e.g. \"-i 5\"), the same on every rank")
    String extra;

    /** The JMH options after the fixed ones: {@code -p quickParams} for a quick run, then --jmh-args. */
    List<String> args(boolean quick, String quickParams) {
        List<String> a = new ArrayList<>();
        if (quick) {
            a.addAll(List.of("-p", quickParams));
        }
        if (extra != null && !extra.isBlank()) {
            a.addAll(List.of(extra.trim().split("\\s+")));
        }
        return a;
    }
}

package dev.irisjvm.bench;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Commands as one line a reader can paste into a shell: plain words as they are, others in single
 * quotes. Reports and sweeps record their commands this way.
 *
 * <pre>{@code
 * ShellWords.join(List.of("sh", "-c", "echo $X"));   // sh -c 'echo $X'
 * }</pre>
 */
public final class ShellWords {
    private ShellWords() {}

    public static String quote(String arg) {
        if (!arg.isEmpty() && arg.chars().allMatch(c -> Character.isLetterOrDigit(c) || "-_.,/=:+@%".indexOf(c) >= 0)) {
            return arg;
        }
        return "'" + arg.replace("'", "'\\''") + "'";
    }

    public static String join(List<String> words) {
        return words.stream().map(ShellWords::quote).collect(Collectors.joining(" "));
    }
}

package dev.irisjvm.bench.report;

import java.util.regex.Pattern;

/**
 * Wraps one Markdown paragraph or list item to a line width, as the README's hand-written text is
 * wrapped, so that a generated section reads like the rest of the file in an editor and in diffs.
 * A line never starts with a word Markdown would read as the start of a list, a heading or a quote
 * ("+", "-", "1.", "#", ">"): such a word stays on the line before, which may then run past the width.
 *
 * <pre>{@code
 * MarkdownWrap.wrap("- all-gather + GEMM at 1.311×", 20);   // "- all-gather + GEMM\n  at 1.311×"
 * }</pre>
 */
final class MarkdownWrap {
    private static final Pattern BLOCK_START = Pattern.compile("[-+*>#]+|\\d+[.)]");

    private MarkdownWrap() {}

    /** {@code text} (one line) wrapped at {@code width}; continuation lines of a list item are indented by two spaces. */
    static String wrap(String text, int width) {
        String indent = text.startsWith("- ") ? "  " : "";
        String[] words = text.split(" ");
        StringBuilder out = new StringBuilder();
        StringBuilder line = new StringBuilder(words[0]);
        for (int i = 1; i < words.length; i++) {
            String word = words[i];
            if (line.length() + 1 + word.length() > width && !BLOCK_START.matcher(word).matches() && line.length() > indent.length()) {
                out.append(line).append('\n');
                line = new StringBuilder(indent).append(word);
            } else {
                line.append(' ').append(word);
            }
        }
        return out.append(line).toString();
    }
}

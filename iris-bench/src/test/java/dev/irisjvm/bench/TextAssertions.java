package dev.irisjvm.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Assertions on text a command writes (a report's markdown, a command's help), for the tests that
 * check many lines of it in a row: one call lists them, and a failure names the missing part and
 * shows the whole text, so that one look at it says what changed.
 */
public final class TextAssertions {
    private TextAssertions() {}

    /** Asserts that {@code text} contains each of {@code parts}, in any order. */
    public static void assertContains(String text, String... parts) {
        for (String part : parts) {
            assertTrue(text.contains(part), () -> "'" + part + "' is missing from:\n" + text);
        }
    }
}

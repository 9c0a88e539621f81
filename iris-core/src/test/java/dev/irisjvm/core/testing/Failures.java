package dev.irisjvm.core.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Failed checks collected and thrown together at the end of a scenario, so that a scenario
 * finishes its collective steps (which every rank must take) before it fails.
 */
public final class Failures {
    private final List<String> first = new ArrayList<>();
    private long count;

    public void check(boolean ok, Supplier<String> message) {
        if (!ok) fail(message.get());
    }

    /** A check's result: null when it passed, else its message. */
    public void add(String failure) {
        if (failure != null) fail(failure);
    }

    public void fail(String message) {
        count++;
        if (first.size() < 10) first.add(message);
    }

    public void throwIfAny() {
        if (count > 0) {
            throw new AssertionError(count + " check(s) failed: " + String.join(" | ", first) + (count > first.size() ? " | ..." : ""));
        }
    }
}

package dev.irisjvm.core.rendezvous;

import java.time.Duration;

/** A point in time a wait must not pass; every blocking step of the rendezvous gets one. */
final class Deadline {
    private final long startNanos = System.nanoTime();
    private final long budgetNanos;

    private Deadline(long budgetNanos) {
        this.budgetNanos = budgetNanos;
    }

    static Deadline after(Duration budget) {
        return new Deadline(nanos(budget));
    }

    /** {@code budget + extra}, saturating instead of overflowing for absurdly long timeouts. */
    static Deadline after(Duration budget, Duration extra) {
        long sum = nanos(budget) + nanos(extra);
        return new Deadline(sum < 0 ? Long.MAX_VALUE / 2 : sum);
    }

    boolean expired() {
        return remainingNanos() <= 0;
    }

    /**
     * Milliseconds to hand to {@code Selector.select} or a socket timeout: rounded up and at
     * least 1, because 0 means "wait forever" there.
     */
    long waitMillis() {
        long remaining = remainingNanos();
        long millis = remaining / 1_000_000 + (remaining % 1_000_000 > 0 ? 1 : 0);
        return Math.max(1, millis);
    }

    private long remainingNanos() {
        // Differences of nanoTime are overflow-safe; absolute deadlines would not be.
        return budgetNanos - (System.nanoTime() - startNanos);
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 2;
        }
    }
}

package dev.irisjvm.core.testing;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The live threads whose names start with a prefix, for tests that check nothing is left running.
 * A thread that has just been told to stop, or whose pool has just terminated, may still be alive for
 * a moment (a pool reports termination before its last worker thread has ended), so the check
 * waits up to five seconds for the list to empty.
 */
public final class LiveThreads {
    private LiveThreads() {}

    /** The names of live threads starting with {@code prefix}, once none are left or after five seconds. */
    public static List<String> named(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<String> alive;
        do {
            alive = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                    .filter(name -> name.startsWith(prefix)).toList();
            if (alive.isEmpty()) {
                break;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return alive;
    }
}

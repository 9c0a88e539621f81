package dev.irisjvm.kernels;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.internal.NativeCalls;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.function.Executable;

/**
 * The rank that the host-side checks name, for tests without a job: as a JUnit extension it sets
 * the process rank ({@link NativeCalls#setRank}) before each test and clears it after, so that
 * messages start "rank N: " as on a rank of a job, and {@link #rejects} asserts such a message.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final CheckRank RANK = new CheckRank(3);
 * ...
 * RANK.rejects("gemm", "lda = 7", () -> GemmChecks.problem(...));
 * }</pre>
 */
public final class CheckRank implements BeforeEachCallback, AfterEachCallback {
    private final int rank;

    /** Checks run as rank {@code rank}. */
    public CheckRank(int rank) {
        this.rank = rank;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        NativeCalls.setRank(rank);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        NativeCalls.setRank(-1);
    }

    /** {@code call} throws an IllegalArgumentException that starts "rank N: {@code op}: " and says {@code expected}. */
    public void rejects(String op, String expected, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith("rank " + rank + ": " + op + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' should say '" + expected + "'");
    }
}

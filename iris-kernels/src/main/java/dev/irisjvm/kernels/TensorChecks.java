package dev.irisjvm.kernels;

/**
 * The argument checks every operation family shares: the exception, a missing argument, a tensor
 * that was freed or belongs to another heap. Each failure is an {@link IllegalArgumentException}
 * whose message starts with the rank and the call, e.g. {@code "rank 1: allReduce: in must not be
 * null"}.
 *
 * <pre>{@code
 * TensorChecks.notNull(rank, "dispatch", "tokens", tokens);
 * TensorChecks.usable(rank, "dispatch", "tokens", tokens, tokens.isLive(), onThisHeap, "");
 * }</pre>
 */
public final class TensorChecks {
    private TensorChecks() {}

    public static IllegalArgumentException fail(int rank, String call, String message) {
        return new IllegalArgumentException("rank " + rank + ": " + call + ": " + message);
    }

    public static void notNull(int rank, String call, String name, Object value) {
        if (value == null) throw fail(rank, call, name + " must not be null");
    }

    /**
     * A live tensor of this Iris instance's heap; {@code tensor} is what the message shows, and
     * {@code hint} (may be empty) ends the message about a tensor of another heap.
     */
    public static void usable(int rank, String call, String name, Object tensor, boolean live, boolean onThisHeap, String hint) {
        if (!live) {
            throw fail(rank, call, name + " " + tensor + " was freed");
        }
        if (!onThisHeap) {
            throw fail(rank, call, name + " " + tensor + " is not on this Iris instance's symmetric heap" + hint);
        }
    }
}

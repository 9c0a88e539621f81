package dev.irisjvm.core.internal;

import dev.irisjvm.core.IrisException;
import java.util.Arrays;
import java.util.List;

/**
 * Closing several resources so that one that fails does not leak the others: every part is
 * closed, in the order given (nulls skipped), and the first failure wins with the later ones added
 * to it as suppressed.
 *
 * <pre>{@code
 * Resources.closeAll(workspace, library, args);   // close(): each part whatever the others did
 *
 * } catch (RuntimeException | Error e) {          // a constructor that failed half-way
 *     Resources.closeAfter(e, trace, workspace, library);
 *     throw e;
 * }
 * }</pre>
 */
public final class Resources {
    private Resources() {}

    /** Closes every part; throws the first failure (a checked one wrapped in an {@link IrisException}). */
    public static void closeAll(AutoCloseable... parts) {
        closeAll(Arrays.asList(parts));
    }

    /** {@link #closeAll(AutoCloseable...)} over a list, in its order. */
    public static void closeAll(List<? extends AutoCloseable> parts) {
        Exception first = closeEach(parts, null);
        if (first instanceof RuntimeException e) {
            throw e;
        }
        if (first != null) {
            throw new IrisException("closing a resource failed: " + first, first);
        }
    }

    /** Closes every part after {@code failure} happened: what they throw is added to it as suppressed. */
    public static void closeAfter(Throwable failure, AutoCloseable... parts) {
        closeAfter(failure, Arrays.asList(parts));
    }

    /** {@link #closeAfter(Throwable, AutoCloseable...)} over a list, in its order. */
    public static void closeAfter(Throwable failure, List<? extends AutoCloseable> parts) {
        closeEach(parts, failure);
    }

    /** The first exception of the closes (null if none), or null after adding them all to {@code failure}. */
    private static Exception closeEach(List<? extends AutoCloseable> parts, Throwable failure) {
        Exception first = null;
        for (AutoCloseable part : parts) {
            if (part == null) {
                continue;
            }
            try {
                part.close();
            } catch (Exception e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }
}

package dev.irisjvm.core.gpu;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.runtime.global.IrisRuntime;
import org.bytedeco.javacpp.Loader;

/**
 * Loads the native runtime once and remembers why it could not be loaded, in the style of
 * Netty's {@code Epoll.isAvailable()} / {@code unavailabilityCause()}. Loading changes no global
 * state beyond the loaded library: no device is touched until someone asks.
 */
public final class NativeLibrary {
    private static final Throwable UNAVAILABILITY_CAUSE = load();

    private NativeLibrary() {}

    private static Throwable load() {
        try {
            Loader.load(IrisRuntime.class);
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** Why the native runtime could not be loaded, or null when it was. */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** Throws an exception with the cause when the native runtime is not loadable. */
    public static void ensureAvailable() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new IrisException(NativeCalls.rankLabel() + ": the Iris native runtime (libiris, "
                    + "libjniIrisRuntime) could not be loaded: " + UNAVAILABILITY_CAUSE, UNAVAILABILITY_CAUSE);
        }
    }
}

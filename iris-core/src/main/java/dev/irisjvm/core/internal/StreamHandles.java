package dev.irisjvm.core.internal;

import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.runtime.iris_stream_s;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link Stream}'s native handle, for this library's native calls outside Stream's package. The
 * handle is a JavaCPP type, so Stream keeps it out of its public API and hands this class the one
 * way to reach it when Stream loads (the JDK's {@code SharedSecrets} pattern).
 *
 * <pre>{@code
 * IrisRuntime.iris_memset_d8(dst, (byte) 0, bytes, StreamHandles.of(stream));
 * }</pre>
 */
public final class StreamHandles {
    private static volatile Function<Stream, iris_stream_s> access;

    private StreamHandles() {}

    /** Called once, by Stream's static initializer. */
    public static void install(Function<Stream, iris_stream_s> streamAccess) {
        if (access != null) {
            throw new IllegalStateException("the stream handle access is installed already");
        }
        access = Objects.requireNonNull(streamAccess);
    }

    /** The open stream's handle; a closed stream throws, naming itself. */
    public static iris_stream_s of(Stream stream) {
        return access.apply(stream);
    }
}

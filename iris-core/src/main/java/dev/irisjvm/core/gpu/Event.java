package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_event_s;
import org.bytedeco.javacpp.FloatPointer;

/**
 * A point in a stream's work; with timing enabled, two events measure the GPU time between them.
 *
 * <pre>{@code
 * try (Event start = Event.timed(); Event end = Event.timed()) {
 *     start.record(s); kernel.launch(...); end.record(s);
 *     float ms = end.elapsedSince(start);
 * }
 * }</pre>
 */
public final class Event extends NativeResource {
    private final iris_event_s handle;
    private final boolean owned;

    private Event(iris_event_s handle, boolean owned) {
        this.handle = handle;
        this.owned = owned;
    }

    public static Event timed() {
        return create(true);
    }

    public static Event untimed() {
        return create(false);
    }

    private static Event create(boolean timing) {
        NativeLibrary.ensureAvailable();
        iris_event_s h = new iris_event_s();
        NativeCalls.check(IrisRuntime.iris_event_create(h, timing ? 1 : 0), "iris_event_create");
        return new Event(h, true);
    }

    /**
     * An event that another library created and owns, by its {@code cudaEvent_t} /
     * {@code hipEvent_t} value: {@code iris.stream().waitFor(Event.wrap(e))} orders this library's
     * work after what that library recorded. {@link #close()} does not destroy it.
     */
    public static Event wrap(long nativeEvent) {
        NativeLibrary.ensureAvailable();
        if (nativeEvent == 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": Event.wrap: the event handle is 0 (no event)");
        }
        return new Event(new iris_event_s(new AddressPointer(nativeEvent)), false);
    }

    /** The {@code cudaEvent_t} / {@code hipEvent_t} value, for another GPU library. */
    public long nativeHandle() {
        return handle().address();
    }

    iris_event_s handle() {
        ensureOpen();
        return handle;
    }

    public void record(Stream stream) {
        NativeCalls.check(IrisRuntime.iris_event_record(handle(), stream.handle()), "iris_event_record");
    }

    public void synchronize() {
        NativeCalls.check(IrisRuntime.iris_event_synchronize(handle()), "iris_event_synchronize");
    }

    /** Milliseconds of GPU time from {@code start} to this event (both recorded and complete). */
    public float elapsedSince(Event start) {
        synchronize();
        try (FloatPointer ms = new FloatPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_event_elapsed_ms(ms, start.handle(), handle()), "iris_event_elapsed_ms");
            return ms.get();
        }
    }

    @Override
    protected String describe() {
        return "event 0x" + Long.toHexString(handle.address());
    }

    @Override
    protected void release() {
        if (owned) {
            NativeCalls.check(IrisRuntime.iris_event_destroy(handle), "iris_event_destroy");
        }
    }
}

package dev.irisjvm.core.gpu;

import dev.irisjvm.core.internal.NativeCalls;
import dev.irisjvm.core.internal.NativeLibrary;
import dev.irisjvm.core.internal.StreamHandles;
import dev.irisjvm.runtime.global.IrisRuntime;
import dev.irisjvm.runtime.iris_stream_s;
import org.bytedeco.javacpp.IntPointer;

/**
 * A GPU stream: work enqueued on it runs in order. Operations in this library take a stream and
 * return as soon as the work is enqueued.
 *
 * <pre>{@code
 * try (Stream s = Stream.create()) {
 *     tile.loadRemote(local, s);
 *     s.synchronize();
 * }
 * }</pre>
 *
 * <p>With another GPU library on the same stream (cuBLAS, cuDNN, NCCL, ...): hand it {@link
 * #nativeHandle()} (a {@code cudaStream_t} / {@code hipStream_t}), or run this library's work on
 * that library's stream with {@link #wrap(long)}:
 * <pre>{@code
 * cublasSetStream(handle, new CUstream_st(new Pointer() {{ address = iris.stream().nativeHandle(); }}));
 * Stream theirs = Stream.wrap(torchStreamAddress);   // not owned: close() leaves it alone
 * }</pre>
 */
public final class Stream extends NativeResource {
    static {
        StreamHandles.install(Stream::handle);
    }

    private final iris_stream_s handle;
    private final boolean owned;

    private Stream(iris_stream_s handle, boolean owned) {
        this.handle = handle;
        this.owned = owned;
    }

    /** A non-blocking stream (it does not synchronize with the legacy default stream). */
    public static Stream create() {
        NativeLibrary.ensureAvailable();
        iris_stream_s h = new iris_stream_s();
        NativeCalls.check(IrisRuntime.iris_stream_create(h, 1), "iris_stream_create");
        return new Stream(h, true);
    }

    /**
     * A stream that another library created and owns, by its {@code cudaStream_t} /
     * {@code hipStream_t} value; this library's work then runs in order with that library's.
     * {@link #close()} does not destroy it. 0, the legacy default stream, is accepted.
     */
    public static Stream wrap(long nativeStream) {
        NativeLibrary.ensureAvailable();
        return new Stream(new iris_stream_s(new AddressPointer(nativeStream)), false);
    }

    /** The {@code cudaStream_t} / {@code hipStream_t} value, for another GPU library. */
    public long nativeHandle() {
        return handle().address();
    }

    /** True when {@link #close()} destroys the stream (made by {@link #create()}, not {@link #wrap}). */
    public boolean isOwned() {
        return owned;
    }

    /** The JavaCPP handle, for the native layer (outside this package: {@link StreamHandles}). */
    iris_stream_s handle() {
        ensureOpen();
        return handle;
    }

    /** Blocks until all work on this stream is done. */
    public void synchronize() {
        NativeCalls.check(IrisRuntime.iris_stream_synchronize(handle()), "iris_stream_synchronize");
    }

    /** True when all enqueued work has finished. */
    public boolean isIdle() {
        int status = IrisRuntime.iris_stream_query(handle());
        if (status == IrisRuntime.IRIS_ERROR_NOT_READY) {
            return false;
        }
        NativeCalls.check(status, "iris_stream_query");
        return true;
    }

    /** Later work on this stream waits for the event. */
    public void waitFor(Event event) {
        NativeCalls.check(IrisRuntime.iris_stream_wait_event(handle(), event.handle()), "iris_stream_wait_event");
    }

    /**
     * Writes {@code value} to the 4-byte aligned device word at {@code address} once the work ahead
     * of it on this stream is complete, its writes visible first. It runs on no SM (a stream memory
     * operation), so a kernel whose CTAs fill the GPU may wait for it; it can be captured.
     *
     * <pre>{@code
     * Memcpy.deviceToDevice(dst, src, bytes, copyStream);
     * copyStream.writeValue32(readyFlag, 1);   // a kernel on another stream polls readyFlag
     * }</pre>
     */
    public void writeValue32(long address, int value) {
        if (address == 0 || address % 4 != 0) {
            throw new IllegalArgumentException(NativeCalls.rankLabel() + ": Stream.writeValue32: address 0x"
                    + Long.toHexString(address) + " is not a 4-byte aligned device address");
        }
        NativeCalls.check(IrisRuntime.iris_stream_write_value32(handle(), address, value), "iris_stream_write_value32");
    }

    /** Starts recording this stream's work into a graph instead of running it. */
    public void beginCapture() {
        NativeCalls.check(IrisRuntime.iris_stream_begin_capture(handle()), "iris_stream_begin_capture");
    }

    /**
     * True while this stream captures into a graph. Operations whose calls cannot be replayed
     * (they advance a host-side epoch per call) check it and refuse, naming their replayable form.
     */
    public boolean isCapturing() {
        try (IntPointer capturing = new IntPointer(1)) {
            NativeCalls.check(IrisRuntime.iris_stream_is_capturing(handle(), capturing), "iris_stream_is_capturing");
            return capturing.get() != 0;
        }
    }

    /** Ends the capture begun by {@link #beginCapture()} and returns the replayable graph. */
    public CudaGraph endCapture() {
        return CudaGraph.endCapture(this);
    }

    @Override
    protected String describe() {
        return (owned ? "stream 0x" : "wrapped stream 0x") + Long.toHexString(handle.address());
    }

    @Override
    protected void release() {
        if (owned) {
            NativeCalls.check(IrisRuntime.iris_stream_destroy(handle), "iris_stream_destroy");
        }
    }
}

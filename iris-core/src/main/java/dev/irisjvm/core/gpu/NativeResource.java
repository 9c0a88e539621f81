package dev.irisjvm.core.gpu;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.internal.NativeCalls;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Base of every object that owns a native GPU resource. Closing is idempotent and thread-safe (a
 * CAS on the state, as Netty's FileDescriptor does); use after close fails with a message that
 * names the object instead of crashing in native code.
 */
public abstract class NativeResource implements AutoCloseable {
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Releases the native resource; called exactly once. */
    protected abstract void release();

    /** A short description for messages, e.g. "stream 0x7f..". */
    protected abstract String describe();

    public final boolean isClosed() {
        return closed.get();
    }

    /** Throws if this resource has been closed. */
    protected final void ensureOpen() {
        if (closed.get()) {
            throw new IrisException(NativeCalls.rankLabel() + ": " + describe() + " is used after close()");
        }
    }

    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            release();
        }
    }
}

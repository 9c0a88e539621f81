package dev.irisjvm.core.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.internal.NativeLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** A stream another library owns, by its raw handle: no GPU needed, since nothing is launched. */
class StreamInteropTest {
    @Test
    void aWrappedStreamHandsBackItsHandleAndIsNotDestroyed() {
        Assumptions.assumeTrue(NativeLibrary.isAvailable(), "native runtime not loadable here");
        Stream theirs = Stream.wrap(0x7f00_1234_5670L);
        assertEquals(0x7f00_1234_5670L, theirs.nativeHandle());
        assertFalse(theirs.isOwned());
        theirs.close();  // must not call into the runtime with a stream it did not create
        assertTrue(theirs.isClosed());
        IrisException e = assertThrows(IrisException.class, theirs::nativeHandle);
        assertTrue(e.getMessage().contains("wrapped stream 0x7f0012345670 is used after close()"), e.getMessage());
        assertEquals(0, Stream.wrap(0).nativeHandle(), "the legacy default stream");
    }
}

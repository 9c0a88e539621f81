package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.IrisException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResourcesTest {
    private final List<String> closed = new ArrayList<>();

    private AutoCloseable part(String name, Exception failure) {
        return () -> {
            closed.add(name);
            if (failure != null) {
                throw failure;
            }
        };
    }

    @Test
    void closesEveryPartInOrderAndSkipsNulls() {
        Resources.closeAll(part("a", null), null, part("b", null));
        Resources.closeAll(List.of(part("c", null)));
        assertEquals(List.of("a", "b", "c"), closed);
    }

    @Test
    void theFirstFailureWinsAndTheOthersAreSuppressed() {
        IllegalStateException first = new IllegalStateException("first");
        IllegalArgumentException second = new IllegalArgumentException("second");
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> Resources.closeAll(part("a", first), part("b", second), part("c", null)));
        assertSame(first, thrown);
        assertArrayEquals(new Throwable[] {second}, thrown.getSuppressed());
        assertEquals(List.of("a", "b", "c"), closed, "a failure does not stop the later parts");
    }

    @Test
    void aCheckedFailureIsWrapped() {
        IOException io = new IOException("disk");
        IrisException thrown = assertThrows(IrisException.class, () -> Resources.closeAll(part("a", io)));
        assertSame(io, thrown.getCause());
    }

    @Test
    void closeAfterAddsEverythingToTheFailure() {
        Error original = new OutOfMemoryError("original");
        RuntimeException during = new RuntimeException("during");
        Resources.closeAfter(original, part("a", during), null, part("b", null));
        assertArrayEquals(new Throwable[] {during}, original.getSuppressed());
        assertEquals(List.of("a", "b"), closed);
    }
}

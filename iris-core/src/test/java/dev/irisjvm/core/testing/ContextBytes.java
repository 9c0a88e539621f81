package dev.irisjvm.core.testing;

import dev.irisjvm.runtime.abi.iris_ctx;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;

/** The bytes of an {@code iris::Ctx} of a given rank and world, for the argument-struct tests that run without a GPU. */
public final class ContextBytes {
    private ContextBytes() {}

    public static byte[] of(int rank, int world) {
        try (iris_ctx ctx = new iris_ctx()) {
            ctx.rank(rank).world(world);
            byte[] bytes = new byte[Loader.sizeof(iris_ctx.class)];
            new BytePointer(ctx).get(bytes);
            return bytes;
        }
    }
}

package dev.irisjvm.core.internal;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

/**
 * Sizes and field offsets of the structs the kernel interface headers ({@code iris/abi/*.h})
 * declare, as the C compiler laid them out: JavaCPP compiles its {@code sizeof} and
 * {@code offsetof} tables against the same declaration the device code includes, so Java never
 * writes an offset by hand.
 *
 * <pre>{@code
 * int bases = AbiLayout.offset(iris_ctx.class, "bases");
 * }</pre>
 */
public final class AbiLayout {
    private AbiLayout() {}

    /** {@code sizeof} the struct. */
    public static int size(Class<? extends Pointer> struct) {
        Loader.load(struct);  // its library registers the sizes and offsets when it loads
        int size = Loader.sizeof(struct);
        if (size <= 0) {
            throw new IllegalStateException("no size for " + struct.getName() + ": is it a generated struct of iris/abi?");
        }
        return size;
    }

    /** {@code offsetof(struct, member)}. */
    public static int offset(Class<? extends Pointer> struct, String member) {
        Loader.load(struct);
        int offset = Loader.offsetof(struct, member);
        if (offset < 0) {
            throw new IllegalStateException(struct.getSimpleName() + " has no member " + member);
        }
        return offset;
    }
}

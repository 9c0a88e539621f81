package dev.irisjvm.core.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;

/**
 * A kernel's arguments packed as the kernel declares them: each value at its natural alignment,
 * structs (such as the 112-byte {@code iris::Ctx}) as raw bytes. Each argument's offset and size
 * are recorded: the launch hands the driver a pointer to each, and checks the sizes against the
 * kernel's parameters. Reusable: {@link #clear()} and
 * fill again, so a hot launch loop allocates nothing; arguments that every launch shares can be
 * packed once and kept with {@link #mark()} / {@link #reset()}.
 *
 * <pre>{@code
 * KernelArgs args = new KernelArgs();
 * args.clear().putBytes(ctx.bytes(), 8).putLong(address).putInt(n);
 * kernel.launch(shape, stream, args);
 *
 * args.clear().putBytes(ctx.bytes(), 8).mark();     // the shared prefix, once
 * kernel.launch(shape, stream, args.reset().putLong(address).putInt(n));   // per launch
 * }</pre>
 */
public final class KernelArgs implements AutoCloseable {
    /** The parameter space of a kernel is 4 KiB on older GPUs; this library stays under it. */
    public static final int CAPACITY = 4096;
    public static final int MAX_ARGS = 256;

    private final BytePointer nativeBuffer = new BytePointer(CAPACITY);
    private final ByteBuffer buffer = nativeBuffer.asByteBuffer().order(ByteOrder.nativeOrder());
    private final IntPointer nativeOffsets = new IntPointer(MAX_ARGS);
    // Written through a view: IntPointer.put is a JNI call, and a launch packs several arguments.
    private final IntBuffer offsets = nativeOffsets.asByteBuffer().order(ByteOrder.nativeOrder()).asIntBuffer();
    // Each argument's size, for the check against the kernel's parameters (Kernel).
    private final int[] sizes = new int[MAX_ARGS];
    private int count;
    private int markPosition;
    private int markCount;

    /** Drops every argument, and the mark. */
    public KernelArgs clear() {
        buffer.clear();
        count = 0;
        markPosition = 0;
        markCount = 0;
        return this;
    }

    /** Remembers the arguments packed so far as the prefix that {@link #reset()} keeps. */
    public KernelArgs mark() {
        markPosition = buffer.position();
        markCount = count;
        return this;
    }

    /** Drops the arguments packed after the last {@link #mark()} (all of them if none). */
    public KernelArgs reset() {
        buffer.position(markPosition);
        count = markCount;
        return this;
    }

    private KernelArgs begin(int size, int alignment) {
        if (count == MAX_ARGS) {
            throw new IllegalArgumentException("more than " + MAX_ARGS + " kernel arguments");
        }
        int at = (buffer.position() + alignment - 1) & -alignment;
        if (at + size > CAPACITY) {
            throw new IllegalArgumentException("kernel arguments exceed " + CAPACITY + " bytes");
        }
        buffer.position(at);
        sizes[count] = size;
        offsets.put(count++, at);
        return this;
    }

    public KernelArgs putInt(int v) {
        begin(4, 4);
        buffer.putInt(v);
        return this;
    }

    /** 64-bit integers and device pointers. */
    public KernelArgs putLong(long v) {
        begin(8, 8);
        buffer.putLong(v);
        return this;
    }

    public KernelArgs putFloat(float v) {
        begin(4, 4);
        buffer.putFloat(v);
        return this;
    }

    public KernelArgs putDouble(double v) {
        begin(8, 8);
        buffer.putDouble(v);
        return this;
    }

    public KernelArgs putShort(short v) {
        begin(2, 2);
        buffer.putShort(v);
        return this;
    }

    public KernelArgs putByte(byte v) {
        begin(1, 1);
        buffer.put(v);
        return this;
    }

    /** A struct passed by value, with the struct's alignment. */
    public KernelArgs putBytes(byte[] bytes, int alignment) {
        if (Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        begin(bytes.length, alignment);
        buffer.put(bytes);
        return this;
    }

    /** Packs boxed values: Integer, Long, Float, Double, Short, Byte, byte[] (8-aligned struct). */
    public KernelArgs putAll(Object... values) {
        for (Object v : values) {
            if (v instanceof Integer i) putInt(i);
            else if (v instanceof Long l) putLong(l);
            else if (v instanceof Float f) putFloat(f);
            else if (v instanceof Double d) putDouble(d);
            else if (v instanceof Short s) putShort(s);
            else if (v instanceof Byte b) putByte(b);
            else if (v instanceof byte[] bytes) putBytes(bytes, 8);
            else throw new IllegalArgumentException("unsupported kernel argument type: "
                    + (v == null ? "null" : v.getClass().getName()));
        }
        return this;
    }

    public int count() {
        return count;
    }

    /** Bytes of argument {@code i}. */
    int size(int i) {
        return sizes[i];
    }

    BytePointer buffer() {
        return nativeBuffer;
    }

    IntPointer offsets() {
        return nativeOffsets;
    }

    @Override
    public void close() {
        nativeBuffer.close();
        nativeOffsets.close();
    }
}

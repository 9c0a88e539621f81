package dev.irisjvm.bench.ccl;

import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import org.bytedeco.javacpp.BytePointer;

/**
 * Compares an output with its reference, both on this rank: bit for bit on the GPU first
 * ({@link Verifier#sameBytes}); where the bits differ and a numeric bound applies, element by
 * element on the host, in chunks, as numbers within the bound (NaN never passes).
 *
 * <pre>{@code
 * String check = outputs.compare(ref.deviceAddress(), out.deviceAddress(), count, DType.BF16, 0.094, "output vs NCCL");
 * // "ok", or "output vs NCCL: 12 of 524288 elements differ by more than 0.094 (largest 0.5 at element 4096)"
 * }</pre>
 */
public final class OutputCheck {
    /** Elements per host chunk. */
    static final int CHUNK_ELEMENTS = 4 << 20;

    private final Iris iris;
    private final Verifier verifier;
    private final Stream stream;

    public OutputCheck(Iris iris, Verifier verifier, Stream stream) {
        this.iris = iris;
        this.verifier = verifier;
        this.stream = stream;
    }

    /**
     * @param bound NaN: the bits must match; else the largest allowed |actual - expected| (0: equal as numbers)
     */
    public String compare(long expected, long actual, long count, DType t, double bound, String what) {
        String bits = verifier.sameBytes(expected, actual, count * t.byteSize(), what);
        if (Verifier.OK.equals(bits) || Double.isNaN(bound)) {
            return bits;
        }
        return numeric(expected, actual, count, t, bound, what);
    }

    private String numeric(long expected, long actual, long count, DType t, double bound, String what) {
        int size = t.byteSize();
        int chunk = (int) Math.min(CHUNK_ELEMENTS, count);
        long wrong = 0;
        long first = -1;
        double largest = 0;
        long largestAt = -1;
        try (BytePointer a = new BytePointer((long) chunk * size); BytePointer b = new BytePointer((long) chunk * size)) {
            for (long at = 0; at < count; at += chunk) {
                int n = (int) Math.min(chunk, count - at);
                Memcpy.deviceToHost(a, expected + at * size, (long) n * size, stream);
                Memcpy.deviceToHost(b, actual + at * size, (long) n * size, stream);
                iris.synchronize(stream);
                ByteBuffer ea = a.position(0).limit((long) n * size).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer eb = b.position(0).limit((long) n * size).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < n; i++) {
                    double x = read(ea, i, t);
                    double y = read(eb, i, t);
                    double d = Math.abs(x - y);
                    if (!(d <= bound)) {
                        wrong++;
                        if (first < 0) {
                            first = at + i;
                        }
                    }
                    if (!Double.isNaN(largest) && (Double.isNaN(d) || d > largest)) {
                        largest = d;   // a NaN (e.g. an element never written) stays the largest
                        largestAt = at + i;
                    }
                }
            }
        }
        if (wrong == 0) {
            return Verifier.OK;
        }
        return what + ": " + wrong + " of " + count + " elements differ by more than " + String.format(Locale.ROOT, "%.3g", bound)
                + " (first at element " + first + "; largest difference " + String.format(Locale.ROOT, "%.3g", largest)
                + " at element " + largestAt + ")";
    }

    /** Element {@code i} of a little-endian buffer of type {@code t}, as a double. */
    static double read(ByteBuffer b, int i, DType t) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(b.getShort(i * 2));
            case F16 -> HalfFloats.f16ToFloat(b.getShort(i * 2));
            case F32 -> b.getFloat(i * 4);
            default -> throw new IllegalArgumentException("not a reducible dtype: " + t);
        };
    }
}

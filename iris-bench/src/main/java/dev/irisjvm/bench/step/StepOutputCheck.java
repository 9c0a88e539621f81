package dev.irisjvm.bench.step;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The fused step's outputs against the baseline's from the same inputs: y, dX (BF16) and dW1, dW2
 * (F32). The two differ by the order of their sums and by where they round: each GEMM rounds its
 * BF16 output once (2^-8 relative), and a rounding of h, a, da or dh that falls the other way moves
 * what follows by about that much of its operand. So a tensor passes when no element is NaN or
 * infinite and its largest difference is within {@value #TOLERANCE} of the baseline's largest
 * magnitude: a few BF16 roundings' worth, while a missing tile, a peer's rows not added or a stale
 * buffer differ by the size of the values themselves.
 *
 * <pre>{@code
 * ByteBuffer[] reference = StepOutputCheck.download(workload.outputs());   // after the baseline's step
 * String check = StepOutputCheck.compare(StepOutputCheck.download(workload.outputs()), reference);  // "ok" or what differs
 * }</pre>
 */
final class StepOutputCheck {
    static final String[] NAMES = {"y", "dX", "dW1", "dW2"};
    static final DType[] TYPES = {DType.BF16, DType.BF16, DType.F32, DType.F32};
    /** Largest difference allowed, relative to the baseline's largest magnitude. */
    static final double TOLERANCE = 1.0 / 64;

    private StepOutputCheck() {}

    static ByteBuffer[] download(SymTensor[] tensors) {
        ByteBuffer[] out = new ByteBuffer[tensors.length];
        for (int i = 0; i < tensors.length; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(tensors[i].byteSize())).order(ByteOrder.LITTLE_ENDIAN);
            tensors[i].copyTo(b);
            out[i] = b.flip();
        }
        return out;
    }

    /** "ok", or per tensor what is wrong; {@code got} and {@code reference} in {@link #NAMES}' order. */
    static String compare(ByteBuffer[] got, ByteBuffer[] reference) {
        List<String> problems = new ArrayList<>();
        for (int t = 0; t < NAMES.length; t++) {
            String p = compare(NAMES[t], TYPES[t], got[t], reference[t]);
            if (p != null) {
                problems.add(p);
            }
        }
        return problems.isEmpty() ? "ok" : String.join("; ", problems);
    }

    /** null when {@code got} matches {@code reference} within the tolerance, else what differs. */
    static String compare(String name, DType type, ByteBuffer got, ByteBuffer reference) {
        int n = reference.remaining() / type.byteSize();
        if (got.remaining() != reference.remaining()) {
            return name + ": " + got.remaining() + " bytes against the baseline's " + reference.remaining();
        }
        double largest = 0;
        for (int i = 0; i < n; i++) {
            double r = value(type, reference, i);
            if (!Double.isFinite(r)) {
                return name + ": the baseline's element " + i + " is " + r;
            }
            largest = Math.max(largest, Math.abs(r));
        }
        double worst = 0;
        int worstAt = 0;
        for (int i = 0; i < n; i++) {
            double g = value(type, got, i);
            if (!Double.isFinite(g)) {
                return name + ": element " + i + " is " + g + " (baseline " + value(type, reference, i) + ")";
            }
            double d = Math.abs(g - value(type, reference, i));
            if (d > worst) {
                worst = d;
                worstAt = i;
            }
        }
        if (largest == 0) {
            return name + ": the baseline is all zeros; nothing to compare";
        }
        if (worst > TOLERANCE * largest) {
            return String.format(Locale.ROOT, "%s: element %d is %.6g, the baseline's %.6g: a difference of %.3g of the largest "
                    + "magnitude %.4g, above %.4g", name, worstAt, value(type, got, worstAt), value(type, reference, worstAt),
                    worst / largest, largest, TOLERANCE);
        }
        return null;
    }

    private static double value(DType type, ByteBuffer b, int i) {
        return switch (type) {
            case BF16 -> Float.intBitsToFloat((b.getShort(b.position() + 2 * i) & 0xFFFF) << 16);
            case F32 -> b.getFloat(b.position() + 4 * i);
            default -> throw new IllegalArgumentException("no check for " + type);
        };
    }
}

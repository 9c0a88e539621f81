package dev.irisjvm.bench.nodes;

import dev.irisjvm.core.DType;
import java.util.Locale;

/**
 * The two-level collective's output against the flat NCCL collective's on the same input.
 * All-gather and all-to-all move bytes: equal bit for bit. The reductions differ in where they
 * round: NCCL rounds each of its world - 1 additions to the element type, the two levels round once
 * per node (the node level adds in float) and then as NCCL adds the nodes' results. Every rounding
 * is at most u (the type's unit roundoff) times a partial sum, and a partial sum of world inputs in
 * [-1, 1) is at most world in magnitude; so the two differ by at most 2 world² u per element (both
 * sides' roundings), while a rank's input missing or added twice moves an element by that input,
 * about 0.5 on average and up to 1, far more than the bound at the worlds of a node.
 *
 * <pre>{@code
 * String why = NodesOutputCheck.compare(true, DType.BF16, 4, hierarchical, flat);   // null when they agree
 * }</pre>
 */
final class NodesOutputCheck {
    private NodesOutputCheck() {}

    /** The most two reductions of world inputs in [-1, 1) may differ by per element. */
    static double bound(DType t, int world) {
        return 2.0 * world * world * unitRoundoff(t);
    }

    static double unitRoundoff(DType t) {
        return switch (t) {
            case BF16 -> 0x1p-8;
            case F16 -> 0x1p-11;
            case F32 -> 0x1p-24;
            default -> throw new IllegalArgumentException("no unit roundoff for " + t);
        };
    }

    /** null when {@code got} agrees with {@code flat}, else the first element that does not and why. */
    static String compare(boolean reduction, DType t, int world, float[] got, float[] flat) {
        if (got.length != flat.length) {
            return got.length + " elements against flat NCCL's " + flat.length;
        }
        double bound = reduction ? bound(t, world) : 0;
        for (int i = 0; i < got.length; i++) {
            float g = got[i];
            float f = flat[i];
            if (!Float.isFinite(f)) {
                return "flat NCCL's element " + i + " is " + f;
            }
            if (!Float.isFinite(g) || (reduction ? Math.abs(g - f) > bound : Float.floatToRawIntBits(g) != Float.floatToRawIntBits(f))) {
                return String.format(Locale.ROOT, "element %d is %s, flat NCCL's %s (%s)", i, g, f,
                        reduction ? "allowed difference " + bound : "moved data must be equal bit for bit");
            }
        }
        return null;
    }
}

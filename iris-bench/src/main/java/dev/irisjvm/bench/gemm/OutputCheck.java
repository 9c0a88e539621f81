package dev.irisjvm.bench.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.function.LongUnaryOperator;

/**
 * The sweep's one check of each shape's output against cuBLAS's on the same inputs: no element
 * unwritten or not finite, and the relative Frobenius difference {@code ||c - c_cublas|| /
 * ||c_cublas||} at most {@code 2 u_out + K 2^-23}: each result is the exact product rounded once
 * to the output type (at most u_out relative) after an F32 accumulation whose difference between
 * two summation orders stays below {@code K 2^-23} relative even if every addition truncated. A
 * wrong tile, a lost k-block or a wrong rounding is far beyond it (a lost block of 64 of K changes
 * the result by about sqrt(64 / K), 4% at K = 36864). The GPU tests check element by element; this
 * only guards the timed kernel.
 *
 * <pre>{@code
 * String check = OutputCheck.compare(mine, theirs, DType.BF16, m * (long) n, k);   // "ok" or what differs
 * }</pre>
 */
public final class OutputCheck {
    private OutputCheck() {}

    /** The tolerance on the relative Frobenius difference. */
    public static double tolerance(DType out, int k) {
        return 2 * out.unitRoundoff() + k * 0x1p-23;
    }

    /** "ok", or what is wrong, comparing {@code count} elements of two outputs of dtype {@code out}. */
    public static String compare(ByteBuffer mine, ByteBuffer theirs, DType out, long count, int k) {
        Difference d = difference(mine, theirs, out, count, i -> i);
        if (d.notFinite() > 0) {
            return d.notFiniteText();
        }
        double tol = tolerance(out, k);
        if (!(d.relative() <= tol)) {
            return String.format(Locale.ROOT, "relative difference to cuBLAS %.3g exceeds %.3g (largest |diff| %.3g at index %d)",
                    d.relative(), tol, d.worst(), d.worstAt());
        }
        return "ok";
    }

    /**
     * How {@code count} elements of {@code mine} differ from {@code theirs}, element i from theirs'
     * element {@code theirIndex(i)}.
     *
     * @param relative       ||mine - theirs|| / ||theirs|| over the finite elements of mine
     * @param notFinite      elements of mine that are not finite (unwritten, or NaN from the poison)
     * @param firstNotFinite the first of them, or -1
     * @param worst          the largest |mine - theirs| and the index {@code worstAt} where it is
     */
    public record Difference(long count, double relative, long notFinite, long firstNotFinite, double worst, long worstAt) {
        public String notFiniteText() {
            return notFinite + " of " + count + " elements are not finite (unwritten?), first at index " + firstNotFinite;
        }
    }

    public static Difference difference(ByteBuffer mine, ByteBuffer theirs, DType t, long count, LongUnaryOperator theirIndex) {
        double diff = 0;
        double norm = 0;
        long bad = 0;
        long firstBad = -1;
        double worst = 0;
        long worstAt = -1;
        for (long i = 0; i < count; i++) {
            double a = get(mine, t, i);
            double b = get(theirs, t, theirIndex.applyAsLong(i));
            if (!Double.isFinite(a)) {
                if (bad++ == 0) {
                    firstBad = i;
                }
                continue;
            }
            double d = a - b;
            diff += d * d;
            norm += b * b;
            if (Math.abs(d) > worst) {
                worst = Math.abs(d);
                worstAt = i;
            }
        }
        return new Difference(count, Math.sqrt(diff) / Math.max(Math.sqrt(norm), Double.MIN_NORMAL), bad, firstBad, worst, worstAt);
    }

    static double get(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(b.getShort(at));
            case F16 -> HalfFloats.f16ToFloat(b.getShort(at));
            case F32 -> b.getFloat(at);
            default -> throw new IllegalArgumentException("not a GEMM output type: " + t);
        };
    }
}

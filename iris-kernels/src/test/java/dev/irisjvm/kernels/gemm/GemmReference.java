package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * The GEMM tests' host side: random matrices whose values the input dtype holds exactly, their
 * byte images (with padded rows), reading results back bit-exactly, and the double-precision
 * reference with the element-wise bound of {@link GemmErrorBound}, and the element-by-element check
 * (poison outside the output, the bound inside) that the fused tests' reference shares.
 */
public final class GemmReference {
    private GemmReference() {}

    /** A rows x cols row-major matrix of values exactly representable in {@code dtype}. */
    public record HostMatrix(DType dtype, int rows, int cols, float[] values) {
        public float at(int r, int c) {
            return values[r * cols + c];
        }

        /** Uniform in [-1, 1), rounded to the dtype (to nearest even, as the device's conversions round). */
        public static HostMatrix random(long seed, DType dtype, int rows, int cols) {
            Random r = new Random(seed);
            float[] v = new float[Math.multiplyExact(rows, cols)];
            for (int i = 0; i < v.length; i++) {
                v[i] = representable(dtype, r.nextFloat() * 2 - 1);
            }
            return new HostMatrix(dtype, rows, cols, v);
        }

        /** The cols x rows transpose: how a K x M A holds the M x K matrix the GEMM multiplies. */
        public HostMatrix transposed() {
            float[] v = new float[values.length];
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) {
                    v[c * rows + r] = values[r * cols + c];
                }
            }
            return new HostMatrix(dtype, cols, rows, v);
        }

        public HostMatrix abs() {
            float[] v = values.clone();
            for (int i = 0; i < v.length; i++) {
                v[i] = Math.abs(v[i]);
            }
            return new HostMatrix(dtype, rows, cols, v);
        }

        /** The matrices one above the other (all of the same width). */
        public static HostMatrix stack(HostMatrix[] parts) {
            int rows = 0;
            for (HostMatrix p : parts) {
                rows += p.rows();
            }
            float[] v = new float[rows * parts[0].cols()];
            int at = 0;
            for (HostMatrix p : parts) {
                System.arraycopy(p.values(), 0, v, at, p.values().length);
                at += p.values().length;
            }
            return new HostMatrix(parts[0].dtype(), rows, parts[0].cols(), v);
        }

        /** The same values in another dtype that holds them exactly (e.g. a BF16 bias as F32). */
        public HostMatrix as(DType other) {
            for (float x : values) {
                if (representable(other, x) != x) {
                    throw new IllegalArgumentException(x + " is not exact in " + other);
                }
            }
            return new HostMatrix(other, rows, cols, values);
        }

        /** The device image with rows {@code ld} elements apart; the padding holds {@code pad}. */
        public ByteBuffer bytes(int ld, float pad) {
            ByteBuffer b = ByteBuffer.allocateDirect(Math.multiplyExact(Math.multiplyExact(rows, ld), dtype.byteSize()))
                    .order(ByteOrder.nativeOrder());
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < ld; c++) {
                    put(b, dtype, c < cols ? at(r, c) : pad);
                }
            }
            return b.flip();
        }

        public ByteBuffer bytes() {
            return bytes(cols, 0f);
        }
    }

    /** {@code x} rounded to {@code t} and back. */
    public static float representable(DType t, float x) {
        return fromBits(t, roundedBits(t, x));
    }

    static void put(ByteBuffer b, DType t, float v) {
        int bits = roundedBits(t, v);
        if (t.byteSize() == 2) {
            b.putShort((short) bits);
        } else {
            b.putInt(bits);
        }
    }

    /** Element {@code index} of a downloaded buffer of dtype {@code t}, as a float. */
    public static float get(ByteBuffer b, DType t, long index) {
        return fromBits(t, bits(b, t, index));
    }

    /** The raw bits of element {@code index} (16 or 32 bits, zero-extended). */
    public static int bits(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return t.byteSize() == 2 ? b.getShort(at) & 0xffff : b.getInt(at);
    }

    /** All bytes 0xFF: what a poisoned (never written) element reads as. */
    public static boolean isPoison(ByteBuffer b, DType t, long index) {
        return t.byteSize() == 2 ? bits(b, t, index) == 0xffff : bits(b, t, index) == -1;
    }

    /** The bits a float has once rounded to {@code t} (to nearest even). */
    public static int roundedBits(DType t, float v) {
        return switch (t) {
            case BF16 -> HalfFloats.floatToBf16(v) & 0xffff;
            case F16 -> HalfFloats.floatToF16(v) & 0xffff;
            case F32 -> Float.floatToRawIntBits(v);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    /** The float that an element of {@code t} with these bits (as {@link #bits} reads them) holds. */
    private static float fromBits(DType t, int bits) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat((short) bits);
            case F16 -> HalfFloats.f16ToFloat((short) bits);
            case F32 -> Float.intBitsToFloat(bits);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    // ---- the reference -----------------------------------------------------------------------------

    /** B(k, n) for either layout. */
    public static float b(HostMatrix b, GemmLayout layout, int k, int n) {
        return layout == GemmLayout.NK ? b.at(n, k) : b.at(k, n);
    }

    /**
     * Exact {@code sum_k A[i][k] B(k, j)} (plus {@code bias[j]} where the bias was given: see
     * {@link #products}) and {@code S = sum_k |A[i][k] B(k, j)|} (plus {@code |bias[j]|}), M x N each.
     */
    public record Reference(int m, int n, int k, double[] sum, double[] absSum) {
        public double sum(int i, int j) {
            return sum[i * n + j];
        }

        public double absSum(int i, int j) {
            return absSum[i * n + j];
        }
    }

    /** Every element, without a bias, in double (products of 16-bit floats are exact in double; sums off by at most K 2^-53 S). */
    public static Reference full(HostMatrix a, HostMatrix b, GemmLayout layout) {
        return products(a, b, layout, 0, a.rows(), null);
    }

    /** {@link #full(HostMatrix, HostMatrix, GemmLayout)} of A as stored in {@code aLayout}: a K x M A is read transposed. */
    public static Reference full(HostMatrix a, GemmALayout aLayout, HostMatrix b, GemmLayout layout) {
        return full(aLayout == GemmALayout.MK ? a : a.transposed(), b, layout);
    }

    /**
     * Rows [row0, row0 + rows) of A times every column of B, plus {@code bias} (or none): a
     * {@code rows} x N reference whose sums include {@code bias[j]} and whose S include {@code |bias[j]|}.
     */
    public static Reference products(HostMatrix a, HostMatrix b, GemmLayout layout, int row0, int rows, float[] bias) {
        int k = a.cols();
        int n = layout == GemmLayout.NK ? b.rows() : b.cols();
        double[] bt = new double[Math.multiplyExact(n, k)];  // B(k, j) at bt[j * k + kk]
        for (int j = 0; j < n; j++) {
            for (int kk = 0; kk < k; kk++) {
                bt[j * k + kk] = b(b, layout, kk, j);
            }
        }
        double[] sum = new double[Math.multiplyExact(rows, n)];
        double[] abs = new double[sum.length];
        IntStream.range(0, rows).parallel().forEach(i -> {
            double[] row = new double[k];
            for (int kk = 0; kk < k; kk++) {
                row[kk] = a.at(row0 + i, kk);
            }
            for (int j = 0; j < n; j++) {
                double s = 0;
                double sa = 0;
                int base = j * k;
                for (int kk = 0; kk < k; kk++) {
                    double p = row[kk] * bt[base + kk];
                    s += p;
                    sa += Math.abs(p);
                }
                double beta = bias == null ? 0 : bias[j];
                sum[i * n + j] = s + beta;
                abs[i * n + j] = sa + Math.abs(beta);
            }
        });
        return new Reference(rows, n, k, sum, abs);
    }

    /** One element: {sum, S}, {@code bias[j]} (or none) included as in {@link #products}. */
    public static double[] element(HostMatrix a, HostMatrix b, GemmLayout layout, int i, int j, float[] bias) {
        double s = 0;
        double sa = 0;
        for (int kk = 0; kk < a.cols(); kk++) {
            double p = (double) a.at(i, kk) * b(b, layout, kk, j);
            s += p;
            sa += Math.abs(p);
        }
        double beta = bias == null ? 0 : bias[j];
        return new double[] {s + beta, sa + Math.abs(beta)};
    }

    // ---- the check ---------------------------------------------------------------------------------

    /**
     * {@code alpha (A B) + beta C0 + bias[j]} as a {@link Window}: {@code ref} is A B without a bias,
     * {@code c0} C as it was before the call (M x N; ignored where beta is 0, so it may be null then),
     * {@code bias} null or N values. Every element within {@link GemmErrorBound#scaled} and the
     * reference's own error.
     */
    public static Window scaledWindow(Reference ref, float alpha, float beta, HostMatrix c0, float[] bias, DType out) {
        return new ReferenceWindow(ref) {
            private double addend(int i, int j) {
                return (beta == 0 ? 0 : (double) beta * c0.at(i, j)) + (bias == null ? 0 : bias[j]);
            }

            private double absAddend(int i, int j) {
                return (beta == 0 ? 0 : Math.abs((double) beta * c0.at(i, j))) + (bias == null ? 0 : Math.abs(bias[j]));
            }

            @Override
            public double expected(int i, int j) {
                return alpha * ref.sum(i, j) + addend(i, j);
            }

            @Override
            public double bound(int i, int j) {
                double scaledSum = Math.abs(alpha) * ref.absSum(i, j);
                return GemmErrorBound.scaled(out, ref.k(), expected(i, j), ref.absSum(i, j), alpha, absAddend(i, j))
                        + GemmErrorBound.referenceError(ref.k() + 2L, scaledSum + absAddend(i, j));
            }

            @Override
            public String detail(int i, int j) {
                return String.format(Locale.ROOT, " (S = %.6g, C0 = %s)", ref.absSum(i, j), beta == 0 ? "unread" : c0.at(i, j));
            }
        };
    }

    /** What the rows x cols window of an output should hold: each element's value and bound. */
    public interface Window {
        int rows();

        int cols();

        double expected(int i, int j);

        double bound(int i, int j);

        /** Appended to a failure's message about element (i, j): "" for nothing. */
        default String detail(int i, int j) {
            return "";
        }
    }

    /** A window of the reference's whole M x N. */
    private abstract static class ReferenceWindow implements Window {
        final Reference ref;

        ReferenceWindow(Reference ref) {
            this.ref = ref;
        }

        @Override
        public int rows() {
            return ref.m();
        }

        @Override
        public int cols() {
            return ref.n();
        }
    }

    /**
     * Checks a downloaded output ({@code allocatedRows} rows of {@code ldc} elements) against
     * {@code w}: every element of its window within its bound, every other element still poison.
     * Returns null, or the count and the first few failures.
     */
    public static String checkElements(String what, ByteBuffer c, DType out, int ldc, int allocatedRows, Window w) {
        int failures = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < allocatedRows; i++) {
            for (int j = 0; j < ldc; j++) {
                long index = (long) i * ldc + j;
                boolean inside = i < w.rows() && j < w.cols();
                String problem = null;
                if (!inside) {
                    if (!isPoison(c, out, index)) {
                        problem = "(" + i + ", " + j + ") outside the " + w.rows() + " x " + w.cols() + " output was written: "
                                + get(c, out, index);
                    }
                } else {
                    double expected = w.expected(i, j);
                    double bound = w.bound(i, j);
                    double got = get(c, out, index);
                    double err = Math.abs(got - expected);
                    if (!(err <= bound)) {  // NaN (unwritten) fails too
                        problem = String.format(Locale.ROOT, "(%d, %d) = %s, expected %.9g ± %.3g", i, j,
                                Double.isNaN(got) && isPoison(c, out, index) ? "poison (never written)" : String.valueOf(got),
                                expected, bound) + w.detail(i, j);
                    }
                }
                if (problem != null) {
                    if (failures < 4) {
                        first.append(failures == 0 ? "" : "; ").append(problem);
                    }
                    failures++;
                }
            }
        }
        if (failures == 0) {
            return null;
        }
        return what + ": " + failures + " of " + (long) allocatedRows * ldc + " elements wrong: " + first
                + (failures > 4 ? "; ..." : "");
    }

    /**
     * Checks C (downloaded: {@code allocatedRows} rows of {@code ldc} elements) against the
     * reference plus bias: every element of the M x N window within {@link GemmErrorBound#element},
     * every other element still poison. Returns null, or the count and the first few failures.
     */
    static String check(String what, ByteBuffer c, DType out, int ldc, int allocatedRows, Reference ref, float[] bias) {
        return checkElements(what, c, out, ldc, allocatedRows, window(ref, bias, out, Slack.NONE));
    }

    /** What a computation that rounds more than once may add to the one-rounding bound of an element. */
    @FunctionalInterface
    interface Slack {
        Slack NONE = (product, absSum, absBias) -> 0;

        /**
         * @param product the exact A·B of the element, without the bias
         * @param absSum  {@code S = sum_k |a_k b_k|}
         * @param absBias {@code |bias[j]|}, 0 without a bias
         */
        double of(double product, double absSum, double absBias);
    }

    /**
     * The reference plus {@code bias[j]} (or none) as a {@link Window}: every element within
     * {@link GemmErrorBound#element} and the reference's own error, plus {@code slack} for a
     * computation that rounds more than once ({@link Slack#NONE} for one rounding).
     */
    static Window window(Reference ref, float[] bias, DType out, Slack slack) {
        return new ReferenceWindow(ref) {
            @Override
            public double expected(int i, int j) {
                return ref.sum(i, j) + (bias == null ? 0 : bias[j]);
            }

            @Override
            public double bound(int i, int j) {
                double beta = bias == null ? 0 : Math.abs(bias[j]);
                return GemmErrorBound.element(out, ref.k(), expected(i, j), ref.absSum(i, j), beta)
                        + GemmErrorBound.referenceError(ref.k(), ref.absSum(i, j)) + slack.of(ref.sum(i, j), ref.absSum(i, j), beta);
            }

            @Override
            public String detail(int i, int j) {
                return String.format(Locale.ROOT, " (S = %.6g)", ref.absSum(i, j));
            }
        };
    }
}

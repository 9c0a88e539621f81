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
 * reference with the element-wise bound of {@link GemmErrorBound}.
 */
final class GemmReference {
    private GemmReference() {}

    /** A rows x cols row-major matrix of values exactly representable in {@code dtype}. */
    record HostMatrix(DType dtype, int rows, int cols, float[] values) {
        float at(int r, int c) {
            return values[r * cols + c];
        }

        /** Uniform in [-1, 1), rounded to the dtype (to nearest even, as the device's conversions round). */
        static HostMatrix random(long seed, DType dtype, int rows, int cols) {
            Random r = new Random(seed);
            float[] v = new float[Math.multiplyExact(rows, cols)];
            for (int i = 0; i < v.length; i++) {
                v[i] = representable(dtype, r.nextFloat() * 2 - 1);
            }
            return new HostMatrix(dtype, rows, cols, v);
        }

        HostMatrix abs() {
            float[] v = values.clone();
            for (int i = 0; i < v.length; i++) {
                v[i] = Math.abs(v[i]);
            }
            return new HostMatrix(dtype, rows, cols, v);
        }

        /** The same values in another dtype that holds them exactly (e.g. a BF16 bias as F32). */
        HostMatrix as(DType other) {
            for (float x : values) {
                if (representable(other, x) != x) {
                    throw new IllegalArgumentException(x + " is not exact in " + other);
                }
            }
            return new HostMatrix(other, rows, cols, values);
        }

        /** The device image with rows {@code ld} elements apart; the padding holds {@code pad}. */
        ByteBuffer bytes(int ld, float pad) {
            ByteBuffer b = ByteBuffer.allocateDirect(Math.multiplyExact(Math.multiplyExact(rows, ld), dtype.byteSize()))
                    .order(ByteOrder.nativeOrder());
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < ld; c++) {
                    put(b, dtype, c < cols ? at(r, c) : pad);
                }
            }
            return b.flip();
        }

        ByteBuffer bytes() {
            return bytes(cols, 0f);
        }
    }

    /** {@code x} rounded to {@code t} and back. */
    static float representable(DType t, float x) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(x));
            case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16(x));
            case F32 -> x;
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    static void put(ByteBuffer b, DType t, float v) {
        switch (t) {
            case BF16 -> b.putShort(HalfFloats.floatToBf16(v));
            case F16 -> b.putShort(HalfFloats.floatToF16(v));
            case F32 -> b.putFloat(v);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        }
    }

    /** Element {@code index} of a downloaded buffer of dtype {@code t}, as a float. */
    static float get(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(b.getShort(at));
            case F16 -> HalfFloats.f16ToFloat(b.getShort(at));
            case F32 -> b.getFloat(at);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    /** The raw bits of element {@code index} (16 or 32 bits, zero-extended). */
    static int bits(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return t.byteSize() == 2 ? b.getShort(at) & 0xffff : b.getInt(at);
    }

    /** All bytes 0xFF: what a poisoned (never written) element reads as. */
    static boolean isPoison(ByteBuffer b, DType t, long index) {
        return t.byteSize() == 2 ? bits(b, t, index) == 0xffff : bits(b, t, index) == -1;
    }

    /** The bits a float has once rounded to {@code t} (to nearest even). */
    static int roundedBits(DType t, float v) {
        return switch (t) {
            case BF16 -> HalfFloats.floatToBf16(v) & 0xffff;
            case F16 -> HalfFloats.floatToF16(v) & 0xffff;
            case F32 -> Float.floatToRawIntBits(v);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    // ---- the reference -----------------------------------------------------------------------------

    /** B(k, n) for either layout. */
    static float b(HostMatrix b, GemmLayout layout, int k, int n) {
        return layout == GemmLayout.NK ? b.at(n, k) : b.at(k, n);
    }

    /** Exact {@code sum_k A[i][k] B(k, j)} (without the bias) and {@code S = sum_k |A[i][k] B(k, j)|}, M x N each. */
    record Reference(int m, int n, int k, double[] sum, double[] absSum) {
        double sum(int i, int j) {
            return sum[i * n + j];
        }

        double absSum(int i, int j) {
            return absSum[i * n + j];
        }
    }

    /** Every element, in double (products of 16-bit floats are exact in double; sums off by at most K 2^-53 S). */
    static Reference full(HostMatrix a, HostMatrix b, GemmLayout layout) {
        int m = a.rows();
        int k = a.cols();
        int n = layout == GemmLayout.NK ? b.rows() : b.cols();
        double[] bt = new double[Math.multiplyExact(n, k)];  // B(k, j) at bt[j * k + kk]
        for (int j = 0; j < n; j++) {
            for (int kk = 0; kk < k; kk++) {
                bt[j * k + kk] = b(b, layout, kk, j);
            }
        }
        double[] sum = new double[Math.multiplyExact(m, n)];
        double[] abs = new double[sum.length];
        IntStream.range(0, m).parallel().forEach(i -> {
            double[] row = new double[k];
            for (int kk = 0; kk < k; kk++) {
                row[kk] = a.at(i, kk);
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
                sum[i * n + j] = s;
                abs[i * n + j] = sa;
            }
        });
        return new Reference(m, n, k, sum, abs);
    }

    /** One element: {sum, S}. */
    static double[] element(HostMatrix a, HostMatrix b, GemmLayout layout, int i, int j) {
        double s = 0;
        double sa = 0;
        for (int kk = 0; kk < a.cols(); kk++) {
            double p = (double) a.at(i, kk) * b(b, layout, kk, j);
            s += p;
            sa += Math.abs(p);
        }
        return new double[] {s, sa};
    }

    /**
     * Checks C (downloaded: {@code allocatedRows} rows of {@code ldc} elements) against the
     * reference plus bias: every element of the M x N window within {@link GemmErrorBound#element},
     * every other element still poison. Returns null, or the count and the first few failures.
     */
    static String check(String what, ByteBuffer c, DType out, int ldc, int allocatedRows, Reference ref, float[] bias) {
        int failures = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < allocatedRows; i++) {
            for (int j = 0; j < ldc; j++) {
                long index = (long) i * ldc + j;
                boolean inside = i < ref.m() && j < ref.n();
                String problem = null;
                if (!inside) {
                    if (!isPoison(c, out, index)) {
                        problem = "(" + i + ", " + j + ") outside the " + ref.m() + " x " + ref.n() + " output was written: "
                                + get(c, out, index);
                    }
                } else {
                    double beta = bias == null ? 0 : bias[j];
                    double expected = ref.sum(i, j) + beta;
                    double got = get(c, out, index);
                    double bound = GemmErrorBound.element(out, ref.k(), expected, ref.absSum(i, j), Math.abs(beta))
                            + GemmErrorBound.referenceError(ref.k(), ref.absSum(i, j));
                    double err = Math.abs(got - expected);
                    if (!(err <= bound)) {  // NaN (unwritten) fails too
                        problem = String.format(Locale.ROOT, "(%d, %d) = %s, expected %.9g ± %.3g (S = %.6g)", i, j,
                                Double.isNaN(got) && isPoison(c, out, index) ? "poison (never written)" : String.valueOf(got),
                                expected, bound, ref.absSum(i, j));
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
}

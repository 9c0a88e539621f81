package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * The fused tests' host side: random 16-bit matrices (any rank can make any rank's from its seed),
 * their device images, the double-precision reference of every output element with its bound,
 * and the element-by-element check.
 *
 * <h2>Bounds</h2>
 * A plain element (all-scatter, all-gather + GEMM) is one GEMM's result: within {@link
 * GemmErrorBound#element} of the exact value, plus the reference's own error. A reduced element
 * (all-reduce, reduce-scatter) sums the ranks' partials {@code p_r} (bias included on rank 0),
 * each itself a rounded GEMM result, one at a time: each addition in F32, rounded back to the
 * output type (fused_common.cuh add_vectors). With {@code e_r} rank r's element bound (and
 * reference error) for its exact partial {@code P_r}, E = sum_r e_r, Mag = sum_r (|P_r| + e_r)
 * (a bound on every partial sum), u the output's unit roundoff and eta its half smallest subnormal:
 * <pre>
 *   two ranks:  |c - sum_r P_r| <= u (|ref| + E + A) + eta + E + A,   A = 2^-24 Mag
 *   w ranks:    |c - sum_r P_r| <= E + (w - 1) ((u + 2^-24) Mag + eta)
 * </pre>
 * (on two ranks the one rounding of the F32 sum s' adds at most {@code u |s'| + eta} with
 * {@code |s'| <= |ref| + E + A}; A covers an F32 addition that is not exact; on more ranks every
 * addition rounds).
 */
final class FusedReference {
    private FusedReference() {}

    /** A rows x cols row-major matrix of values exactly representable in {@code dtype}. */
    record Matrix(DType dtype, int rows, int cols, float[] values) {
        float at(int r, int c) {
            return values[r * cols + c];
        }

        /** Uniform in [-1, 1), rounded to the dtype (to nearest even, as the device rounds). */
        static Matrix random(long seed, DType dtype, int rows, int cols) {
            Random r = new Random(seed);
            float[] v = new float[Math.multiplyExact(rows, cols)];
            for (int i = 0; i < v.length; i++) {
                v[i] = round(dtype, r.nextFloat() * 2 - 1);
            }
            return new Matrix(dtype, rows, cols, v);
        }

        Matrix abs() {
            float[] v = values.clone();
            for (int i = 0; i < v.length; i++) v[i] = Math.abs(v[i]);
            return new Matrix(dtype, rows, cols, v);
        }

        /** Rows [row0, row0 + count). */
        Matrix rows(int row0, int count) {
            float[] v = new float[count * cols];
            System.arraycopy(values, row0 * cols, v, 0, v.length);
            return new Matrix(dtype, count, cols, v);
        }

        /** The matrices one above the other (all of the same width). */
        static Matrix stack(Matrix[] parts) {
            int rows = 0;
            for (Matrix p : parts) rows += p.rows();
            float[] v = new float[rows * parts[0].cols()];
            int at = 0;
            for (Matrix p : parts) {
                System.arraycopy(p.values(), 0, v, at, p.values().length);
                at += p.values().length;
            }
            return new Matrix(parts[0].dtype(), rows, parts[0].cols(), v);
        }

        /** The device image, rows {@code ld} elements apart; padding and rows from {@code rows} on up to {@code allRows} are 0xFFFF. */
        ByteBuffer bytes(int ld, int allRows, int row0) {
            ByteBuffer b = ByteBuffer.allocateDirect(Math.multiplyExact(Math.multiplyExact(allRows, ld), 2)).order(ByteOrder.nativeOrder());
            for (int r = 0; r < allRows; r++) {
                for (int c = 0; c < ld; c++) {
                    int mine = r - row0;
                    b.putShort(mine >= 0 && mine < rows && c < cols ? bits(dtype, at(mine, c)) : (short) -1);
                }
            }
            return b.flip();
        }

        ByteBuffer bytes() {
            return bytes(cols, rows, 0);
        }
    }

    static float round(DType t, float x) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(x));
            case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16(x));
            default -> throw new IllegalArgumentException("not a 16-bit dtype: " + t);
        };
    }

    static short bits(DType t, float x) {
        return t == DType.BF16 ? HalfFloats.floatToBf16(x) : HalfFloats.floatToF16(x);
    }

    static float get(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(b.getShort(at));
            case F16 -> HalfFloats.f16ToFloat(b.getShort(at));
            case F32 -> b.getFloat(at);
            default -> throw new IllegalArgumentException("not a GEMM dtype: " + t);
        };
    }

    static boolean poison(ByteBuffer b, DType t, long index) {
        int at = Math.toIntExact(index * t.byteSize());
        return t.byteSize() == 2 ? b.getShort(at) == (short) -1 : b.getInt(at) == -1;
    }

    static float b(Matrix b, GemmLayout layout, int k, int n) {
        return layout == GemmLayout.NK ? b.at(n, k) : b.at(k, n);
    }

    /**
     * Exact products of rows [row0, row0 + rows) of A with every column of B, plus {@code bias}
     * (or none): {sum, S = sum |a b| + |bias|} per element, rows x N.
     */
    static double[][] products(Matrix a, int row0, int rows, Matrix b, GemmLayout layout, float[] bias) {
        int k = a.cols();
        int n = layout == GemmLayout.NK ? b.rows() : b.cols();
        double[] bt = new double[Math.multiplyExact(n, k)];
        for (int j = 0; j < n; j++) {
            for (int kk = 0; kk < k; kk++) {
                bt[j * k + kk] = b(b, layout, kk, j);
            }
        }
        double[] sum = new double[Math.multiplyExact(rows, n)];
        double[] abs = new double[sum.length];
        IntStream.range(0, rows).parallel().forEach(i -> {
            int row = (row0 + i) * k;
            for (int j = 0; j < n; j++) {
                double s = 0;
                double sa = 0;
                int base = j * k;
                for (int kk = 0; kk < k; kk++) {
                    double p = a.values()[row + kk] * bt[base + kk];
                    s += p;
                    sa += Math.abs(p);
                }
                double beta = bias == null ? 0 : bias[j];
                sum[i * n + j] = s + beta;
                abs[i * n + j] = sa + Math.abs(beta);
            }
        });
        return new double[][] {sum, abs};
    }

    /** One element's exact {sum, S} (bias included). */
    static double[] element(Matrix a, int row, Matrix b, GemmLayout layout, int col, float[] bias) {
        double s = 0;
        double sa = 0;
        for (int kk = 0; kk < a.cols(); kk++) {
            double p = (double) a.at(row, kk) * b(b, layout, kk, col);
            s += p;
            sa += Math.abs(p);
        }
        double beta = bias == null ? 0 : bias[col];
        return new double[] {s + beta, sa + Math.abs(beta)};
    }

    /** The bound of a plain element: one GEMM of K products (S includes |bias|). */
    static double plainBound(DType out, long k, double ref, double absSum) {
        return GemmErrorBound.element(out, k, ref, absSum, 0) + GemmErrorBound.referenceError(k, absSum);
    }

    /** The bound of a reduced element from each rank's exact partial and S (see the class comment). */
    static double reducedBound(DType out, long kLocal, double[] partials, double[] absSums) {
        double u = out.unitRoundoff();
        double eta = out.halfSmallestSubnormal();
        double e = 0;
        double magnitude = 0;
        double ref = 0;
        for (int r = 0; r < partials.length; r++) {
            double er = plainBound(out, kLocal, partials[r], absSums[r]);
            e += er;
            magnitude += Math.abs(partials[r]) + er;
            ref += partials[r];
        }
        int world = partials.length;
        if (world <= 2) {
            double adds = (world - 1) * 0x1p-24 * magnitude;
            return u * (Math.abs(ref) + e + adds) + eta + e + adds;
        }
        return e + (world - 1) * ((u + 0x1p-24) * magnitude + eta);
    }

    /** Expected values and bounds of an output, row-major rows x cols. */
    record Expected(int rows, int cols, double[] values, double[] bounds) {}

    /**
     * Checks a downloaded output ({@code allocatedRows} rows of {@code ldc} elements) against the
     * expectation: every element of the rows x cols window within its bound, every other element
     * still poison. Returns null, or the count and the first few failures.
     */
    static String check(String what, ByteBuffer c, DType out, int ldc, int allocatedRows, Expected e) {
        int failures = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < allocatedRows; i++) {
            for (int j = 0; j < ldc; j++) {
                long index = (long) i * ldc + j;
                String problem = null;
                if (i >= e.rows() || j >= e.cols()) {
                    if (!poison(c, out, index)) {
                        problem = "(" + i + ", " + j + ") outside the " + e.rows() + " x " + e.cols() + " output was written: "
                                + get(c, out, index);
                    }
                } else {
                    double expected = e.values()[i * e.cols() + j];
                    double bound = e.bounds()[i * e.cols() + j];
                    double got = get(c, out, index);
                    if (!(Math.abs(got - expected) <= bound)) {  // NaN (unwritten) fails too
                        problem = String.format(Locale.ROOT, "(%d, %d) = %s, expected %.9g ± %.3g", i, j,
                                poison(c, out, index) ? "poison (never written)" : String.valueOf(got), expected, bound);
                    }
                }
                if (problem != null) {
                    if (failures < 4) first.append(failures == 0 ? "" : "; ").append(problem);
                    failures++;
                }
            }
        }
        return failures == 0 ? null : what + ": " + failures + " of " + (long) allocatedRows * ldc + " elements wrong: " + first
                + (failures > 4 ? "; ..." : "");
    }
}

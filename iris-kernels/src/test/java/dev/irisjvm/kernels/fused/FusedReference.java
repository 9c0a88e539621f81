package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmReference;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The fused tests' host side beyond {@link GemmReference} (whose random matrices any rank can make
 * for any rank from a seed, and whose exact products, dtype helpers and element check these build
 * on): the device images of row blocks, the bounds of every output element, and the check.
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

    /**
     * The device image of {@code m} (16-bit), rows {@code ld} elements apart, as rows
     * [row0, row0 + m.rows()) of {@code allRows}; padding and the other rows are 0xFFFF.
     */
    static ByteBuffer bytes(HostMatrix m, int ld, int allRows, int row0) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.multiplyExact(Math.multiplyExact(allRows, ld), 2)).order(ByteOrder.nativeOrder());
        for (int r = 0; r < allRows; r++) {
            for (int c = 0; c < ld; c++) {
                int mine = r - row0;
                b.putShort(mine >= 0 && mine < m.rows() && c < m.cols()
                        ? (short) GemmReference.roundedBits(m.dtype(), m.at(mine, c)) : (short) -1);
            }
        }
        return b.flip();
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
    record Expected(int rows, int cols, double[] values, double[] bounds) implements GemmReference.Window {
        @Override
        public double expected(int i, int j) {
            return values[i * cols + j];
        }

        @Override
        public double bound(int i, int j) {
            return bounds[i * cols + j];
        }
    }

    /**
     * Checks a downloaded output ({@code allocatedRows} rows of {@code ldc} elements) against the
     * expectation: every element of the rows x cols window within its bound, every other element
     * still poison. Returns null, or the count and the first few failures.
     */
    static String check(String what, ByteBuffer c, DType out, int ldc, int allocatedRows, Expected e) {
        return GemmReference.checkElements(what, c, out, ldc, allocatedRows, e);
    }
}

package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;

/**
 * How far one element of the GEMM's output may be from the exact result, and how far two
 * implementations that each honour that bound may be from each other: what the GPU tests check
 * element by element, written down once.
 *
 * <h2>The bound</h2>
 * For an output element {@code c} of {@code ref = sum_k a_k b_k + beta} (exact), with {@code S =
 * sum_k |a_k b_k|}, K terms, the bias {@code beta} (0 without one), output unit roundoff {@code
 * u_out} ({@link DType#unitRoundoff()}) and {@code eta_out} the output's half smallest subnormal
 * ({@link DType#halfSmallestSubnormal()}):
 * <pre>
 *   |c - ref| &lt;= u_out |ref| + (1 + u_out) K 2^-22 (S + |beta|) + eta_out
 * </pre>
 * Why it holds for any kernel that does what {@link Gemm} promises:
 * <ol>
 * <li>a product of two BF16 (8-bit significands) or F16 (11-bit) values has at most 22 significant
 *     bits, so it is exact in F32;</li>
 * <li>the K products and the bias are summed in F32 in some order and grouping (blocks of K, tensor
 *     core fragments, the bias last): K additions, each off by less than 2^-23 of its result even if
 *     the hardware truncates instead of rounding, so the F32 sum s' satisfies {@code |s' - ref| <=
 *     gamma (S + |beta|)} with {@code gamma = K 2^-23 / (1 - K 2^-23) <= K 2^-22} for {@code K <= 2^22}
 *     (the factor 2 also absorbs the tensor cores' alignment of products inside an MMA);</li>
 * <li>rounding s' once to the output type adds at most {@code u_out |s'| + eta_out}, and {@code
 *     |s'| <= |ref| + K 2^-22 (S + |beta|)}.</li>
 * </ol>
 * The reference is computed in double: its own error, at most {@code K 2^-53 S}, is covered by
 * {@link #referenceError}.
 *
 * <p>Two implementations that both satisfy the bound (this GEMM and cuBLAS, say) differ by at most
 * twice it; {@link #pairBound} states that in terms of what is measured ({@code |c_other|} and an
 * upper bound of S), without the exact reference. For large K the worst case grows like K while
 * real errors grow like sqrt(K), so the GPU tests add a statistical check on sampled elements (see
 * GemmScenarios).
 *
 * <pre>{@code
 * double bound = GemmErrorBound.element(DType.BF16, k, ref, absSum, Math.abs(bias));
 * boolean ok = Math.abs(c - ref) <= bound + GemmErrorBound.referenceError(k, absSum);
 * }</pre>
 */
public final class GemmErrorBound {
    /** Relative error of one F32 accumulation step, with the margin explained above: 2^-22. */
    public static final double ACCUMULATION_UNIT = 0x1p-22;

    private GemmErrorBound() {}

    /** The accumulation term {@code K 2^-22 (S + |beta|)}. */
    public static double accumulation(long k, double absSum, double absBias) {
        return k * ACCUMULATION_UNIT * (absSum + absBias);
    }

    /**
     * The bound on {@code |c - ref|} for one element.
     *
     * @param out     the output dtype (BF16, F16 or F32)
     * @param k       the number of products summed
     * @param ref     the exact result, bias included
     * @param absSum  {@code S = sum_k |a_k b_k|}
     * @param absBias {@code |beta|}, 0 without a bias
     */
    public static double element(DType out, long k, double ref, double absSum, double absBias) {
        double u = out.unitRoundoff();
        return u * Math.abs(ref) + (1 + u) * accumulation(k, absSum, absBias) + out.halfSmallestSubnormal();
    }

    /**
     * The bound on {@code |c - ref|} for one element of {@code C = alpha A B + beta C0 + bias}, with
     * {@code ref = alpha sum_k a_k b_k + beta c0 + bias} exact. The F32 sum s' of the products is
     * within {@code K 2^-22 S} of the exact one as above, so {@code alpha s'} within {@code |alpha| K
     * 2^-22 S}; forming {@code alpha s' + beta c0} and adding the bias rounds at most three more
     * times, each off by at most 2^-24 of a value below {@code 2 (|alpha| S + |beta c0| + |bias|)}.
     * Those count as two more terms of the accumulation over the scaled sum:
     * <pre>
     *   |c - ref| &lt;= u_out |ref| + (1 + u_out) (K + 2) 2^-22 (|alpha| S + |beta c0| + |bias|) + eta_out
     * </pre>
     * With alpha 1 and no beta term this is {@link #element} with two more terms (the kernel then
     * rounds as {@link #element} says, so either bound holds).
     *
     * @param alpha     the product's factor
     * @param absAddend {@code |beta c0| + |bias|}: what is added to the scaled product
     */
    public static double scaled(DType out, long k, double ref, double absSum, double alpha, double absAddend) {
        return element(out, k + 2, ref, Math.abs(alpha) * absSum, absAddend);
    }

    /** The error of a reference summed in double: {@code K 2^-53 S} (rounded up generously to K 2^-50 S). */
    public static double referenceError(long k, double absSum) {
        return k * 0x1p-50 * absSum;
    }

    /**
     * The bound on {@code |c - cOther|} when both satisfy {@link #element}, in terms of what is
     * measured: {@code cOther} itself and an upper bound of S (e.g. an F32 GEMM of |A| and |B|,
     * divided by {@code 1 - K 2^-22}). From {@code |ref| <= (|cOther| + T) / (1 - u)} with {@code T}
     * the part of the bound that does not scale with {@code |ref|}:
     * {@code |c - cOther| <= 2 (u (|cOther| + T) / (1 - u) + T)}.
     */
    public static double pairBound(DType out, long k, double cOther, double absSumUpper, double absBias) {
        double u = out.unitRoundoff();
        double t = (1 + u) * accumulation(k, absSumUpper, absBias) + out.halfSmallestSubnormal()
                + referenceError(k, absSumUpper);
        return 2 * (u * (Math.abs(cOther) + t) / (1 - u) + t);
    }

    /** An upper bound of S from an F32 GEMM of |A| and |B| (itself off by at most K 2^-22 S). */
    public static double absSumUpper(long k, double absSumF32) {
        double shrink = 1 - k * ACCUMULATION_UNIT;
        if (shrink <= 0) {
            throw new IllegalArgumentException("K = " + k + " is too large for this bound (K 2^-22 >= 1)");
        }
        return absSumF32 / shrink;
    }
}

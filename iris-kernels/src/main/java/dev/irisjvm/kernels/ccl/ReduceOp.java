package dev.irisjvm.kernels.ccl;

/**
 * How {@link Collectives#allReduce all-reduce} and {@link Collectives#reduceScatter reduce-scatter}
 * combine the ranks' elements. Elements are converted to float, combined in float and rounded to
 * the tensor's type once (the ring and atomic all-reduce algorithms round partial results too; see
 * {@link AllReduceAlgorithm}), as NCCL does for bf16 and f16.
 */
public enum ReduceOp {
    /** The sum over ranks. */
    SUM("sum"),
    /** The largest value (fmaxf: a NaN loses to a number). */
    MAX("max"),
    /** The smallest value (fminf). */
    MIN("min"),
    /** The sum over ranks times 1/world (float), rounded once: NCCL's ncclAvg up to rounding. */
    AVG("avg");

    private final String kernelSuffix;

    ReduceOp(String kernelSuffix) {
        this.kernelSuffix = kernelSuffix;
    }

    /** The suffix of the kernels that implement this op: {@code sum}, {@code max}, {@code min}, {@code avg}. */
    public String kernelSuffix() {
        return kernelSuffix;
    }
}

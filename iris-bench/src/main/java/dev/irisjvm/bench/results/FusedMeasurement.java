package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One timed point of the fused sweep: an operation at a global shape, one implementation, the time
 * per call over {@code reps} timed calls after warm-up, measured with CUDA events on every rank:
 * per repetition the slowest rank counts (a collective is done when its last rank is), and
 * {@code medianUs} is the median of those maxima.
 *
 * @param op            all_scatter, all_reduce, reduce_scatter, all_gather
 * @param shape         the global "MxNxK" (TP = world)
 * @param impl          {@link #FUSED} (the fused kernel, {@code variant} says which), {@link #BASELINE}
 *                      (cuBLAS then NCCL in sequence), {@link #BASELINE_IRIS} (cuBLAS then the library's own
 *                      collective), {@link #CUBLAS} (the rank's GEMM alone with cublasGemmEx: the floor),
 *                      {@link #CUBLASLT} (the same with cuBLASLt's heuristic and a workspace), {@link #IRIS_GEMM}
 *                      (the same GEMM with dev.irisjvm.kernels.gemm.Gemm), {@link #NCCL} (the collective alone),
 *                      {@link #IRIS_CCL} (the library's collective alone)
 * @param variant       the fused kernel's variant ("epilogue", "spare_warps"; all-scatter's runs before 2026-12-03:
 *                      "sequential"); of the baselines, the GEMM they ran ({@link #CUBLAS} or {@link #CUBLASLT},
 *                      whichever was faster alone; "" in runs before 2026-12-05: cublasGemmEx); of {@link #IRIS_CCL},
 *                      the all-reduce algorithm AUTO resolved to ("one_shot", ...) or ""; "" otherwise
 * @param auto          whether FusedVariant.AUTO picks this variant for this shape (fused only)
 * @param rankMedianUs  each rank's own median, in rank order
 * @param flopsPerRank  2 M N_local K_local
 * @param nvlinkBytes   bytes one rank sends over NVLink per call (see dev.irisjvm.bench.fused.FusedShape)
 * @param check         "ok" when the output matched the baseline's, "reference" for the baseline, "" where
 *                      there is nothing to check, "not checked (...)", else what was wrong
 */
public record FusedMeasurement(String op, String shape, int m, int n, int k, int world, String impl, String variant, boolean auto,
                               int reps, double medianUs, double minUs, double maxUs, List<Double> rankMedianUs,
                               double flopsPerRank, double nvlinkBytes, String check) {
    public static final String FUSED = "fused";
    public static final String BASELINE = "baseline";
    public static final String BASELINE_IRIS = "baseline_iris";
    /** The vendor GEMM then NCCL on window-registered buffers (NCCL's symmetric kernels). */
    public static final String BASELINE_WINDOW = "baseline_window";
    public static final String CUBLAS = "cublas";
    public static final String CUBLASLT = "cublaslt";
    public static final String IRIS_GEMM = "iris_gemm";
    public static final String NCCL = "nccl";
    public static final String IRIS_CCL = "iris_ccl";
    public static final String OK = "ok";
    public static final String REFERENCE = "reference";

    /** What a shape whose rows or columns the ranks cannot split records instead of a check: nothing ran. */
    public static final String UNSPLITTABLE = "not run, the ranks cannot split this shape: ";

    /**
     * What a fused kernel's variant records where only UNFUSED can split the shape's rows (a
     * reduce-scatter whose rows per rank are not whole 128-row tiles): nothing ran.
     */
    public static final String KERNEL_ROWS = "not run, the fused kernels cannot split these rows: ";

    /** Whether the output check failed (not merely skipped, and not a shape the ranks or the kernels cannot split). */
    public boolean checkFailed() {
        return check != null && !check.isEmpty() && !OK.equals(check) && !REFERENCE.equals(check) && !check.startsWith("not checked")
                && !unsplittable() && !check.startsWith(KERNEL_ROWS);
    }

    /** Whether this records a shape the ranks cannot split ({@link #UNSPLITTABLE}). */
    public boolean unsplittable() {
        return check != null && check.startsWith(UNSPLITTABLE);
    }

    /** A measurement with nothing timed and the reason in {@code check}. */
    public static FusedMeasurement failed(String op, String shape, int m, int n, int k, int world, String impl, String variant,
                                          String why) {
        return new FusedMeasurement(op, shape, m, n, k, world, impl, variant, false, 0, 0, 0, 0, List.of(), 0, 0, why);
    }
}

package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One timed GEMM point: a shape, an implementation, and the time per call over {@code reps}
 * timed calls after warm-up, measured with CUDA events. {@code medianUs} is the figure that counts.
 *
 * @param shape          {@code MxNxK:nk} or {@code MxNxK:kn} (see dev.irisjvm.bench.gemm.GemmShape)
 * @param m              rows of A and C
 * @param n              columns of C
 * @param k              the reduction dimension
 * @param layout         "nk" (B is N x K) or "kn" (B is K x N), "km_nk" or "km_kn" with A stored K x M
 * @param inType         "bf16" or "f16"
 * @param outType        "bf16", "f16" or "f32"
 * @param impl           "iris" (dev.irisjvm.kernels.gemm.Gemm), "iris-portable" (the same with GemmMainloop.PORTABLE,
 *                       GemmSweep --portable), "cublas" (cublasGemmEx, F32 compute, default algorithm) or "cublaslt" (cublasLtMatmul, F32 compute, the heuristic's first algorithm, a workspace)
 * @param reps           timed calls, over all rounds
 * @param sets           input sets the calls rotated through (A, B and C each), so that they do not sit in L2
 * @param medianUs       median time per call over all {@code reps}
 * @param minUs          fastest call
 * @param maxUs          slowest call
 * @param tflops         2 M N K / median, in TFLOP/s (1e12 per second)
 * @param check          "ok" when the output matched cuBLAS's within the stated tolerance, "reference" for
 *                       cuBLAS itself, "not checked (...)" without cuBLAS, else what was wrong
 * @param roundMediansUs each round's median, in the order of the rounds; null in sweeps from before rounds
 * @param algorithm      for cuBLASLt, the algorithm its heuristic chose (dev.irisjvm.kernels.baselines.CublasLtAlgorithm's
 *                       text); for Iris, its schedule on the GPU (Gemm.schedule: whole tiles or stream-K); null
 *                       otherwise, and in sweeps from before Iris recorded it
 */
public record GemmMeasurement(
        String shape,
        int m,
        int n,
        int k,
        String layout,
        String inType,
        String outType,
        String impl,
        int reps,
        int sets,
        double medianUs,
        double minUs,
        double maxUs,
        double tflops,
        String check,
        List<Double> roundMediansUs,
        String algorithm) {

    public static final String IRIS = "iris";
    /** Iris's portable mainloop forced (GemmSweep --portable), whatever the GPU. */
    public static final String IRIS_PORTABLE = "iris-portable";
    /** Iris with its on-first-use schedule tuner (GemmSweep --tuned). */
    public static final String IRIS_TUNED = "iris-tuned";
    public static final String CUBLAS = "cublas";
    public static final String CUBLASLT = "cublaslt";
    public static final String OK = "ok";
    public static final String REFERENCE = "reference";

    /** 2 M N K. */
    public double flops() {
        return 2.0 * m * n * k;
    }

    /** "Iris", "cuBLAS" or "cuBLASLt": the implementation as the report names it. */
    public String implName() {
        return switch (impl) {
            case IRIS -> "Iris";
            case IRIS_PORTABLE -> "Iris (portable)";
            case IRIS_TUNED -> "Iris (tuned)";
            case CUBLAS -> "cuBLAS";
            case CUBLASLT -> "cuBLASLt";
            default -> impl;
        };
    }

    /** An output that was checked and did not pass (neither "ok", nor the reference, nor "not checked (...)"). */
    public boolean checkFailed() {
        return !OK.equals(check) && !REFERENCE.equals(check) && !check.startsWith("not checked");
    }

    /** A cuBLAS point that may stand as a shape's baseline: timed, and its output the reference or checked against it. */
    public boolean usableBaseline() {
        return (CUBLAS.equals(impl) || CUBLASLT.equals(impl)) && tflops > 0 && (REFERENCE.equals(check) || OK.equals(check));
    }

    /**
     * The strongest baseline of a shape: the faster of two points (either may be null), counting only
     * {@link #usableBaseline() usable} ones, the first on a tie; null when neither counts. A baseline
     * whose output failed its check is no baseline: a wrong result is not a rate to reach.
     */
    public static GemmMeasurement strongest(GemmMeasurement first, GemmMeasurement second) {
        boolean a = first != null && first.usableBaseline();
        boolean b = second != null && second.usableBaseline();
        if (a && b) {
            return second.tflops() > first.tflops() ? second : first;
        }
        return a ? first : b ? second : null;
    }
}

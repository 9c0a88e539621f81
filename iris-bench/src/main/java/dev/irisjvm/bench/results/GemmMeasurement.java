package dev.irisjvm.bench.results;

/**
 * One timed GEMM point: a shape, an implementation, and the time per call over {@code reps}
 * timed calls after warm-up, measured with CUDA events. {@code medianUs} is the figure that counts.
 *
 * @param shape    {@code MxNxK:nk} or {@code MxNxK:kn} (see dev.irisjvm.bench.gemm.GemmShape)
 * @param m        rows of A and C
 * @param n        columns of C
 * @param k        the reduction dimension
 * @param layout   "nk" (B is N x K) or "kn" (B is K x N)
 * @param inType   "bf16" or "f16"
 * @param outType  "bf16", "f16" or "f32"
 * @param impl     "iris" (dev.irisjvm.kernels.gemm.Gemm) or "cublas" (cublasGemmEx, F32 compute, default algorithm)
 * @param reps     timed calls
 * @param sets     input sets the calls rotated through (A, B and C each), so that they do not sit in L2
 * @param medianUs median time per call
 * @param minUs    fastest call
 * @param maxUs    slowest call
 * @param tflops   2 M N K / median, in TFLOP/s (1e12 per second)
 * @param check    "ok" when the output matched cuBLAS's within the stated tolerance, "reference" for
 *                 cuBLAS itself, "not checked (...)" without cuBLAS, else what was wrong
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
        String check) {

    public static final String IRIS = "iris";
    public static final String CUBLAS = "cublas";
    public static final String OK = "ok";
    public static final String REFERENCE = "reference";

    /** 2 M N K. */
    public double flops() {
        return 2.0 * m * n * k;
    }
}

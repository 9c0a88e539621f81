package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmKernelArgs;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmProblem;

/**
 * 08 GEMM + all-scatter of your own ({@code 08_gemm_all_scatter.cu}): the library's GEMM building
 * blocks ({@code #include <iris/gemm.cuh>}) with an epilogue that stores every finished piece of C
 * into every rank's copy. A column-parallel layer: every rank holds the same A (M x K) and its own
 * shard of the weight, B_r (n_local x K); it computes its n_local columns of {@code C = A [B_0; B_1;
 * ...]^T} and ends with all of them. {@link GemmKernelArgs} builds the kernel's argument (the TMA
 * descriptors of A and B_r, and this rank's column block of the symmetric C as the output). The
 * shapes are small and ragged, so that every edge of the tiles is crossed; C is poisoned with NaN
 * first and checked element by element against a double-precision reference within the GEMM's
 * error bound ({@link GemmErrorBound}). Needs an H100 or H200 (sm_90a: wgmma and TMA).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example08GemmAllScatter
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 computed 264 of 528 columns and received the rest (333 x 528 x 200): OK} and the same for rank 1.
 */
public final class Example08GemmAllScatter {
    private static final String KERNEL = "gemm_all_scatter";
    /** Rows: two full tiles of 128 and a ragged one. */
    private static final int M = 333;
    /** Columns per rank: a full tile of 256 and 8 more, a multiple of 8 as the epilogue's 16-byte pieces need. */
    private static final int N_LOCAL = 264;
    /** Three k-blocks of 64 and a ragged one. */
    private static final int K = 200;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int world = iris.worldSize();
            int rank = iris.rank();
            int n = world * N_LOCAL;
            long seed = Examples.runSeed(iris);
            KernelCompiler compiler = KernelCompiler.forIris(iris);
            if (!compiler.architecture().equals("sm_90a")) {
                throw new IllegalStateException("rank " + rank + ": this example needs an H100 or H200 (sm_90a); this GPU is "
                        + compiler.architecture());
            }
            try (DeviceModule kernels = compiler.compileResource(Example08GemmAllScatter.class, "08_gemm_all_scatter.cu")
                         .load();
                 SymTensor a = iris.heap().empty(DType.BF16, M, K);
                 SymTensor b = iris.heap().empty(DType.BF16, N_LOCAL, K);
                 SymTensor c = iris.heap().full(Float.NaN, DType.BF16, M, n)) {
                a.copyFrom(Examples.randomFloats(seed, world, M * K));  // stream `world`: the same A on every rank
                b.copyFrom(Examples.randomFloats(seed, rank, N_LOCAL * K));
                kernels.setMaxDynamicSharedBytes(KERNEL, Gemm.SHARED_BYTES);

                // This rank's output: columns [rank * N_LOCAL, (rank + 1) * N_LOCAL) of C, rows n apart.
                long columns = c.deviceAddress() + (long) rank * N_LOCAL * DType.BF16.byteSize();
                GemmKernelArgs gemm = GemmKernelArgs.of(new GemmProblem(DeviceMatrix.of(a), DeviceMatrix.of(b), GemmLayout.NK,
                        0, new DeviceMatrix(columns, DType.BF16, M, N_LOCAL, n)));
                iris.barrier();  // every rank's C is poisoned before any rank stores into it

                // gemm_all_scatter(iris::Ctx ctx, iris_gemm_args args)
                kernels.launch(KERNEL, gemm.launchShape(), iris.stream(), iris.deviceContext(), gemm);
                iris.barrier();  // publishes every rank's stores into this rank's C
                iris.synchronize();

                double[] reference = gemm(seed, world, false);
                double[] bound = bound(reference, gemm(seed, world, true));
                Examples.expectWithin(iris, "C", c.toFloatArray(), reference, bound);
                Examples.ok(iris, "computed " + N_LOCAL + " of " + n + " columns and received the rest (" + M + " x " + n
                        + " x " + K + ")");
            }
        }
    }

    /** Each element's bound: the GEMM's (F32 accumulation, one rounding to BF16) and the reference's own error. */
    private static double[] bound(double[] ref, double[] absSum) {
        double[] bound = new double[ref.length];
        for (int i = 0; i < ref.length; i++) {
            bound[i] = GemmErrorBound.element(DType.BF16, K, ref[i], absSum[i], 0)
                    + GemmErrorBound.referenceError(K, absSum[i]);
        }
        return bound;
    }

    /**
     * C exactly, M x (world * N_LOCAL), column block r being A B_r^T from the inputs as BF16 holds them:
     * sum_k A[i][k] B_r[j][k] in double, or sum_k |A[i][k] B_r[j][k]| when {@code abs} (the bound's S).
     */
    private static double[] gemm(long seed, int world, boolean abs) {
        int n = world * N_LOCAL;
        double[] a = asBf16(Examples.randomFloats(seed, world, M * K));
        double[] out = new double[M * n];
        for (int r = 0; r < world; r++) {
            double[] b = asBf16(Examples.randomFloats(seed, r, N_LOCAL * K));
            for (int i = 0; i < M; i++) {
                for (int j = 0; j < N_LOCAL; j++) {
                    double sum = 0;
                    for (int k = 0; k < K; k++) {
                        double p = a[i * K + k] * b[j * K + k];
                        sum += abs ? Math.abs(p) : p;
                    }
                    out[i * n + r * N_LOCAL + j] = sum;
                }
            }
        }
        return out;
    }

    /** The floats as the BF16 tensors hold them (rounded to nearest even), exactly as doubles. */
    private static double[] asBf16(float[] values) {
        double[] out = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(values[i]));
        }
        return out;
    }
}

package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmKernelArgs;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmProblem;
import java.util.Arrays;

/**
 * The GEMM + all-scatter problem of examples 08 and 10, a column-parallel layer: every rank holds the
 * same A (M x K) and its own shard of the weight, B_r (n_local x K); it computes its n_local columns
 * of {@code C = A [B_0; B_1; ...]^T} into its column block of the symmetric C, and must end with all
 * of C. The shapes are small and ragged, so that every edge of the tiles is crossed. Collective:
 * every rank creates it with the same run seed.
 *
 * <pre>{@code
 * try (AllScatterProblem p = new AllScatterProblem(iris, seed)) {
 *     p.poison();                                         // collective
 *     module.launch("gemm_all_scatter", p.gemm().launchShape(), iris.stream(), iris.deviceContext(), p.gemm());
 *     iris.barrier();
 *     p.check("C");
 * }
 * }</pre>
 */
final class AllScatterProblem implements AutoCloseable {
    /** Rows: two full tiles of 128 and a ragged one. */
    static final int M = 333;
    /** Columns per rank: a full tile of 256 and 8 more, a multiple of 8 as the epilogue's 16-byte pieces need. */
    static final int N_LOCAL = 264;
    /** Three k-blocks of 64 and a ragged one. */
    static final int K = 200;

    private final Iris iris;
    private final long seed;
    private final SymTensor a;
    private final SymTensor b;
    private final SymTensor c;
    private final GemmKernelArgs gemm;
    private double[] reference;
    private double[] bound;

    AllScatterProblem(Iris iris, long seed) {
        this.iris = iris;
        this.seed = seed;
        int world = iris.worldSize();
        a = iris.heap().empty(DType.BF16, M, K);
        b = iris.heap().empty(DType.BF16, N_LOCAL, K);
        c = iris.heap().empty(DType.BF16, M, columns());
        a.copyFrom(Examples.randomFloats(seed, world, M * K));  // stream `world`: the same A on every rank
        b.copyFrom(Examples.randomFloats(seed, iris.rank(), N_LOCAL * K));
        // This rank's output: columns [rank * N_LOCAL, (rank + 1) * N_LOCAL) of C, rows world * N_LOCAL apart.
        long block = c.deviceAddress() + (long) iris.rank() * N_LOCAL * DType.BF16.byteSize();
        gemm = GemmKernelArgs.of(new GemmProblem(DeviceMatrix.of(a), DeviceMatrix.of(b), GemmLayout.NK, 0,
                new DeviceMatrix(block, DType.BF16, M, N_LOCAL, columns())));
    }

    /** Columns of the whole C: world * N_LOCAL. */
    int columns() {
        return iris.worldSize() * N_LOCAL;
    }

    /** The kernels' argument: A, B_r, this rank's column block of C as the output. */
    GemmKernelArgs gemm() {
        return gemm;
    }

    /** Collective: fills this rank's C with NaN, and returns once every rank has (before anyone stores into it). */
    void poison() {
        float[] nan = new float[M * columns()];
        Arrays.fill(nan, Float.NaN);
        c.copyFrom(nan);
        iris.barrier();
    }

    /** Throws unless this rank's C holds all of C within the GEMM's error bound (after the call and a barrier). */
    void check(String what) {
        iris.synchronize();
        if (reference == null) {
            reference = product(false);
            bound = bound(reference, product(true));
        }
        Examples.expectWithin(iris, what, c.toFloatArray(), reference, bound);
    }

    /** Each element's bound: the GEMM's (F32 accumulation, one rounding to BF16) and the reference's own error. */
    private static double[] bound(double[] ref, double[] absSum) {
        double[] bound = new double[ref.length];
        for (int i = 0; i < ref.length; i++) {
            bound[i] = GemmErrorBound.element(DType.BF16, K, ref[i], absSum[i], 0) + GemmErrorBound.referenceError(K, absSum[i]);
        }
        return bound;
    }

    /**
     * C exactly, M x (world * N_LOCAL), column block r being A B_r^T from the inputs as BF16 holds them:
     * sum_k A[i][k] B_r[j][k] in double, or sum_k |A[i][k] B_r[j][k]| when {@code abs} (the bound's S).
     */
    private double[] product(boolean abs) {
        int world = iris.worldSize();
        int n = columns();
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

    @Override
    public void close() {
        c.close();
        b.close();
        a.close();
    }

    @Override
    public String toString() {
        return M + " x " + columns() + " x " + K;
    }
}

package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Locale;
import org.bytedeco.cuda.cublas.cublasLtContext;
import org.bytedeco.cuda.cublas.cublasLtMatmulAlgo_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulDescOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulHeuristicResult_t;
import org.bytedeco.cuda.cublas.cublasLtMatmulPreferenceOpaque_t;
import org.bytedeco.cuda.cublas.cublasLtMatrixLayoutOpaque_t;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.ShortPointer;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * One problem of {@link CublasLtGemm} as cuBLASLt takes it: the matmul descriptor (F32 compute
 * and scale, which operand is transposed), the matrix layouts, and the algorithm the heuristic
 * ranked first for them under the workspace preference. Made once per problem, kept, and closed
 * with the handle.
 *
 * <pre>{@code
 * CublasLtPlan plan = CublasLtPlan.create(handle, preference, new CublasLtPlan.Problem(GemmLayouts.MK_NK, DType.BF16, DType.BF16,
 *         m, n, k, k, k, n));
 * plan.algorithm().text();
 * plan.close();
 * }</pre>
 */
final class CublasLtPlan implements AutoCloseable {
    /** What the heuristic's answer depends on: layouts, types, sizes and leading dimensions (row-major, in elements). */
    record Problem(GemmLayouts layouts, DType in, DType out, int m, int n, int k, int lda, int ldb, int ldc) {
        @Override
        public String toString() {
            return m + " x " + n + " x " + k + " " + layouts.kernelPart() + " " + in + " -> " + out + " (lda " + lda + ", ldb " + ldb
                    + ", ldc " + ldc + ")";
        }
    }

    /**
     * The row-major problem as cuBLASLt's column-major {@code D = op(A) op(B)}, D being C^T (N x M,
     * ld ldc). cuBLASLt's A is our B: an NK B (N x K, ld ldb) reads column-major as K x N, so it is
     * transposed; a KN B (K x N) reads as N x K, taken as it is. cuBLASLt's B is our A: an MK A (M x
     * K, ld lda) reads column-major as K x M, taken as it is; a KM A (K x M) reads as M x K, so it is
     * transposed. Rows and columns are those of the stored matrices, before {@code transA} and
     * {@code transB}; the fields name cuBLASLt's operands.
     */
    record ColumnMajor(int transA, long aRows, long aCols, long lda, int transB, long bRows, long bCols, long ldb, long cRows,
                       long cCols, long ldc) {
        static ColumnMajor of(Problem p) {
            boolean nk = p.layouts().b() == GemmLayout.NK;
            boolean km = p.layouts().a() == GemmALayout.KM;
            return new ColumnMajor(nk ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N, nk ? p.k() : p.n(), nk ? p.n() : p.k(), p.ldb(),
                    km ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N, km ? p.m() : p.k(), km ? p.k() : p.m(), p.lda(), p.n(), p.m(), p.ldc());
        }
    }

    private final Problem problem;
    private cublasLtMatmulDescOpaque_t desc;
    /** cuBLASLt's A (our B), B (our A) and C (= D, C^T). */
    private cublasLtMatrixLayoutOpaque_t ltA;
    private cublasLtMatrixLayoutOpaque_t ltB;
    private cublasLtMatrixLayoutOpaque_t ltC;
    /** Host memory holding the chosen algorithm, which {@link #algo} points into. */
    private cublasLtMatmulHeuristicResult_t result;
    private cublasLtMatmulAlgo_t algo;
    private CublasLtAlgorithm algorithm;

    private CublasLtPlan(Problem problem) {
        this.problem = problem;
    }

    /** Describes the problem and asks the heuristic for its best algorithm; throws IllegalStateException naming the call that failed. */
    static CublasLtPlan create(cublasLtContext handle, cublasLtMatmulPreferenceOpaque_t preference, Problem p) {
        CublasLtPlan plan = new CublasLtPlan(p);
        try {
            plan.describe(handle, preference);
            return plan;
        } catch (RuntimeException e) {
            plan.close();
            throw e;
        }
    }

    private void describe(cublasLtContext handle, cublasLtMatmulPreferenceOpaque_t preference) {
        ColumnMajor cm = ColumnMajor.of(problem);
        try (PointerPointer<cublasLtMatmulDescOpaque_t> out = new PointerPointer<>(1)) {
            CublasStatus.checkLt(cublas.cublasLtMatmulDescCreate(out, cublas.CUBLAS_COMPUTE_32F, cudart.CUDA_R_32F),
                    "cublasLtMatmulDescCreate (" + problem + ")");
            desc = out.get(cublasLtMatmulDescOpaque_t.class, 0);
        }
        setInt(cublas.CUBLASLT_MATMUL_DESC_TRANSA, cm.transA(), "TRANSA");
        setInt(cublas.CUBLASLT_MATMUL_DESC_TRANSB, cm.transB(), "TRANSB");
        int in = CublasGemm.type(problem.in());
        ltA = layout(in, cm.aRows(), cm.aCols(), cm.lda(), "A");
        ltB = layout(in, cm.bRows(), cm.bCols(), cm.ldb(), "B");
        ltC = layout(CublasGemm.type(problem.out()), cm.cRows(), cm.cCols(), cm.ldc(), "C");
        result = new cublasLtMatmulHeuristicResult_t();
        int[] returned = new int[1];
        // C and D are one matrix (the output is written in place), so D's layout is C's.
        CublasStatus.checkLt(cublas.cublasLtMatmulAlgoGetHeuristic(handle, desc, ltA, ltB, ltC, ltC, preference, 1, result, returned),
                "cublasLtMatmulAlgoGetHeuristic (" + problem + ")");
        if (returned[0] < 1) {
            throw new IllegalStateException("cublasLtMatmulAlgoGetHeuristic (" + problem + ") returned no algorithm");
        }
        CublasStatus.checkLt(result.state(), "cublasLtMatmulAlgoGetHeuristic (" + problem + "), its first result");
        algo = result.algo();
        algorithm = new CublasLtAlgorithm(config(cublas.CUBLASLT_ALGO_CONFIG_ID, "ID"),
                name("CUBLASLT_MATMUL_TILE_", config(cublas.CUBLASLT_ALGO_CONFIG_TILE_ID, "TILE_ID")),
                name("CUBLASLT_MATMUL_STAGES_", config(cublas.CUBLASLT_ALGO_CONFIG_STAGES_ID, "STAGES_ID")),
                name("CUBLASLT_CLUSTER_SHAPE_", configShort(cublas.CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "CLUSTER_SHAPE_ID")),
                config(cublas.CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "SPLITK_NUM"),
                name("CUBLASLT_REDUCTION_SCHEME_", config(cublas.CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "REDUCTION_SCHEME")),
                config(cublas.CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "CTA_SWIZZLING"), result.workspaceSize(), result.wavesCount());
    }

    private void setInt(int attribute, int value, String name) {
        try (IntPointer v = new IntPointer(new int[] {value})) {
            CublasStatus.checkLt(cublas.cublasLtMatmulDescSetAttribute(desc, attribute, v, Integer.BYTES),
                    "cublasLtMatmulDescSetAttribute(" + name + ") (" + problem + ")");
        }
    }

    private cublasLtMatrixLayoutOpaque_t layout(int type, long rows, long cols, long ld, String which) {
        try (PointerPointer<cublasLtMatrixLayoutOpaque_t> out = new PointerPointer<>(1)) {
            CublasStatus.checkLt(cublas.cublasLtMatrixLayoutCreate(out, type, rows, cols, ld),
                    "cublasLtMatrixLayoutCreate(" + which + ": " + rows + " x " + cols + ", ld " + ld + ") (" + problem + ")");
            return out.get(cublasLtMatrixLayoutOpaque_t.class, 0);
        }
    }

    /** A 32-bit configuration attribute of the chosen algorithm (cuBLASLt checks the size given against the attribute's). */
    private int config(int attribute, String name) {
        try (IntPointer v = new IntPointer(new int[1]); SizeTPointer written = new SizeTPointer(1)) {
            CublasStatus.checkLt(cublas.cublasLtMatmulAlgoConfigGetAttribute(algo, attribute, v, Integer.BYTES, written),
                    "cublasLtMatmulAlgoConfigGetAttribute(" + name + ")");
            return v.get();
        }
    }

    /** A 16-bit one (the inner and cluster shape ids). */
    private int configShort(int attribute, String name) {
        try (ShortPointer v = new ShortPointer(new short[1]); SizeTPointer written = new SizeTPointer(1)) {
            CublasStatus.checkLt(cublas.cublasLtMatmulAlgoConfigGetAttribute(algo, attribute, v, Short.BYTES, written),
                    "cublasLtMatmulAlgoConfigGetAttribute(" + name + ")");
            return Short.toUnsignedInt(v.get());
        }
    }

    /** The enum constant's name after {@code prefix}, in lower case ("128x256"); the number when none has that value. */
    static String name(String prefix, int value) {
        try {
            for (Field f : cublas.class.getFields()) {
                if (f.getName().startsWith(prefix) && !f.getName().endsWith("_END") && !f.getName().endsWith("_MASK")
                        && f.getType() == int.class && Modifier.isStatic(f.getModifiers()) && f.getInt(null) == value) {
                    return f.getName().substring(prefix.length()).toLowerCase(Locale.ROOT);
                }
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + prefix + "* of the cuBLAS presets", e);
        }
        return String.valueOf(value);
    }

    /**
     * Enqueues {@code C = alpha A B + beta C} on {@code stream}: our A and B (row-major device
     * addresses) as cuBLASLt's B and A, C read and written in place, with the chosen algorithm and
     * the workspace.
     */
    void matmul(cublasLtContext handle, Pointer alpha, Pointer ourA, Pointer ourB, Pointer beta, Pointer c, Pointer workspace,
                long workspaceBytes, CUstream_st stream) {
        CublasStatus.checkLt(cublas.cublasLtMatmul(handle, desc, alpha, ourB, ltA, ourA, ltB, beta, c, ltC, c, ltC, algo,
                workspace, workspaceBytes, stream), "cublasLtMatmul (" + problem + ", " + algorithm.text() + ")");
    }

    CublasLtAlgorithm algorithm() {
        return algorithm;
    }

    /** Destroys the descriptors and frees the heuristic's result; a second call does nothing. */
    @Override
    public void close() {
        try {
            for (cublasLtMatrixLayoutOpaque_t l : new cublasLtMatrixLayoutOpaque_t[] {ltC, ltB, ltA}) {
                if (l != null) {
                    CublasStatus.checkLt(cublas.cublasLtMatrixLayoutDestroy(l), "cublasLtMatrixLayoutDestroy (" + problem + ")");
                }
            }
            if (desc != null) {
                CublasStatus.checkLt(cublas.cublasLtMatmulDescDestroy(desc), "cublasLtMatmulDescDestroy (" + problem + ")");
            }
        } finally {
            ltC = ltB = ltA = null;
            desc = null;
            algo = null;
            if (result != null) {
                result.close();
                result = null;
            }
        }
    }
}

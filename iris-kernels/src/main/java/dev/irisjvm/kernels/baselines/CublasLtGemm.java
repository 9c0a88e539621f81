package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.DeviceMemory;
import dev.irisjvm.core.gpu.NativeResource;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.baselines.CublasLtPlan.Problem;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.HashMap;
import java.util.Map;
import org.bytedeco.cuda.cublas.cublasLtContext;
import org.bytedeco.cuda.cublas.cublasLtMatmulPreferenceOpaque_t;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * cuBLASLt's GEMM on the same row-major operands as {@link CublasGemm}, at its strongest without
 * autotuning of our own: {@code cublasLtMatmul} with F32 compute, the algorithm that {@code
 * cublasLtMatmulAlgoGetHeuristic} ranks first, and a device workspace this object owns, offered to
 * the heuristic and given to every call. The heuristic is asked once per problem (layout, types,
 * sizes, leading dimensions) and its answer kept, so timed calls do not pay for it; {@link
 * #algorithm} says what it chose. Enqueued on this library's stream.
 *
 * <p>Operands as in CublasGemm (C^T = B^T A^T in column-major terms; see {@link
 * CublasLtPlan.ColumnMajor}); C is read when accumulating and written in place.
 *
 * <p>Also the cuBLASLt baseline of iris-bench's GEMM sweep.
 *
 * <pre>{@code
 * try (CublasLtGemm lt = CublasLtGemm.open(stream, CublasLtGemm.DEFAULT_WORKSPACE_BYTES)) {
 *     lt.gemm(GemmLayout.NK, DType.BF16, DType.BF16, m, n, k, a, b, c, false);
 *     lt.gemm(GemmLayouts.KM_KN, DType.BF16, DType.F32, m, n, k, a, b, c, true);   // C += A^T B of a K x M A
 *     String chosen = lt.algorithm(GemmLayout.NK, DType.BF16, DType.BF16, m, n, k).text();
 * }
 * }</pre>
 */
public final class CublasLtGemm extends NativeResource implements RowMajorGemm {
    /** 32 MiB: the workspace the cuBLAS documentation recommends for Hopper ({@code cublasSetWorkspace}), as PyTorch gives it. */
    public static final long DEFAULT_WORKSPACE_BYTES = 32L << 20;

    private final cublasLtContext handle;
    private final cublasLtMatmulPreferenceOpaque_t preference;
    private final DeviceMemory workspace;
    private final DevicePointer workspacePointer;
    private final CUstream_st stream;
    private final FloatPointer one = new FloatPointer(1f);
    private final FloatPointer zero = new FloatPointer(0f);
    private final Map<Problem, CublasLtPlan> plans = new HashMap<>();
    private final String version;

    private CublasLtGemm(cublasLtContext handle, cublasLtMatmulPreferenceOpaque_t preference, DeviceMemory workspace, CUstream_st stream,
                         String version) {
        this.handle = handle;
        this.preference = preference;
        this.workspace = workspace;
        this.workspacePointer = new DevicePointer(workspace.address());
        this.stream = stream;
        this.version = version;
    }

    /**
     * Loads cuBLASLt, creates a handle, allocates {@code workspaceBytes} of device memory on the
     * current GPU and a preference that lets the heuristic use all of it; calls go to {@code
     * stream}. Throws IllegalStateException saying why it cannot.
     */
    public static CublasLtGemm open(Stream stream, long workspaceBytes) {
        if (workspaceBytes <= 0) {
            throw new IllegalArgumentException("cuBLASLt workspace must be positive, got " + workspaceBytes + " bytes");
        }
        try {
            Loader.load(cublas.class);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot load cuBLASLt (is libcublasLt.so.13 on LD_LIBRARY_PATH? bin/gpu-bundle's env.sh "
                    + "looks for it): " + t, t);
        }
        cublasLtContext h = new cublasLtContext();
        CublasStatus.checkLt(cublas.cublasLtCreate(h), "cublasLtCreate");
        cublasLtMatmulPreferenceOpaque_t preference = null;
        DeviceMemory workspace = null;
        try {
            try (PointerPointer<cublasLtMatmulPreferenceOpaque_t> out = new PointerPointer<>(1)) {
                CublasStatus.checkLt(cublas.cublasLtMatmulPreferenceCreate(out), "cublasLtMatmulPreferenceCreate");
                preference = out.get(cublasLtMatmulPreferenceOpaque_t.class, 0);
            }
            try (LongPointer bytes = new LongPointer(new long[] {workspaceBytes})) {
                CublasStatus.checkLt(cublas.cublasLtMatmulPreferenceSetAttribute(preference, cublas.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        bytes, Long.BYTES), "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES = " + workspaceBytes + ")");
            }
            workspace = DeviceMemory.allocate(workspaceBytes);
            long v = cublas.cublasLtGetVersion();
            return new CublasLtGemm(h, preference, workspace, new CUstream_st(new DevicePointer(stream.nativeHandle())),
                    "cuBLASLt " + v / 10000 + "." + (v % 10000) / 100 + "." + v % 100);
        } catch (RuntimeException e) {
            if (workspace != null) {
                workspace.close();
            }
            if (preference != null) {
                cublas.cublasLtMatmulPreferenceDestroy(preference);
            }
            cublas.cublasLtDestroy(h);
            throw e;
        }
    }

    /** "cuBLASLt 13.1.0". */
    public String version() {
        return version;
    }

    /** The device workspace offered to the heuristic and given to every call, in bytes. */
    public long workspaceBytes() {
        return workspace.bytes();
    }

    /**
     * {@code C = A B (+ C when accumulate)} on row-major operands: A per layout (ld lda), B per layout
     * (ld ldb), C M x N (ld ldc); A and B of type {@code in}, C of type {@code out}. The first call
     * of a problem asks the heuristic (host work, not enqueued).
     */
    @Override
    public void gemm(GemmLayouts layouts, DType in, DType out, int m, int n, int k, long a, int lda, long b, int ldb, long c, int ldc,
                     boolean accumulate) {
        plan(new Problem(layouts, in, out, m, n, k, lda, ldb, ldc)).matmul(handle, one, new DevicePointer(a), new DevicePointer(b),
                accumulate ? one : zero, new DevicePointer(c), workspacePointer, workspace.bytes(), stream);
    }

    /** The algorithm chosen for a problem (asking the heuristic if no call has yet). */
    public CublasLtAlgorithm algorithm(GemmLayouts layouts, DType in, DType out, int m, int n, int k, int lda, int ldb, int ldc) {
        return plan(new Problem(layouts, in, out, m, n, k, lda, ldb, ldc)).algorithm();
    }

    /** The same for contiguous operands. */
    public CublasLtAlgorithm algorithm(GemmLayouts layouts, DType in, DType out, int m, int n, int k) {
        return algorithm(layouts, in, out, m, n, k, (int) layouts.a().aCols(m, k), (int) layouts.b().bCols(n, k), n);
    }

    /** The same for an M x K A. */
    public CublasLtAlgorithm algorithm(GemmLayout layout, DType in, DType out, int m, int n, int k, int lda, int ldb, int ldc) {
        return algorithm(new GemmLayouts(GemmALayout.MK, layout), in, out, m, n, k, lda, ldb, ldc);
    }

    /** The same for an M x K A, contiguous. */
    public CublasLtAlgorithm algorithm(GemmLayout layout, DType in, DType out, int m, int n, int k) {
        return algorithm(new GemmLayouts(GemmALayout.MK, layout), in, out, m, n, k);
    }

    private CublasLtPlan plan(Problem p) {
        ensureOpen();
        CublasLtPlan plan = plans.get(p);
        if (plan == null) {
            plan = CublasLtPlan.create(handle, preference, p);
            plans.put(p, plan);
        }
        return plan;
    }

    @Override
    protected String describe() {
        return version + " handle with a " + (workspace.bytes() >> 20) + " MiB workspace";
    }

    /** Frees the plans, the preference, the workspace and the handle; the caller has let enqueued calls finish. */
    @Override
    protected void release() {
        try {
            for (CublasLtPlan plan : plans.values()) {
                plan.close();
            }
            plans.clear();
            CublasStatus.checkLt(cublas.cublasLtMatmulPreferenceDestroy(preference), "cublasLtMatmulPreferenceDestroy");
        } finally {
            workspace.close();
            one.close();
            zero.close();
            CublasStatus.checkLt(cublas.cublasLtDestroy(handle), "cublasLtDestroy");
        }
    }
}

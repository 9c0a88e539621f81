package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;

/**
 * cuBLAS's GEMM on the same row-major operands, the reference the large GPU tests compare with
 * (JavaCPP CUDA presets; libcublas comes from the GPU host). {@code cublasGemmEx} with F32
 * compute ({@code CUBLAS_COMPUTE_32F}), the default algorithm, default math mode, enqueued on this
 * library's stream.
 *
 * <p>Row-major through column-major cuBLAS: a row-major M x N C is a column-major N x M matrix, C^T
 * = B^T A^T. Row-major A (M x K, ld K) is column-major A^T (K x M); a KN B (K x N, ld N) is
 * column-major B^T (N x K), used as it is; an NK B (N x K, ld K) is column-major K x N, transposed.
 *
 * <p>Also the cuBLAS baseline of iris-bench's GEMM and fused sweeps.
 *
 * <pre>{@code
 * try (CublasGemm cublas = CublasGemm.open(stream)) {
 *     cublas.gemm(GemmLayout.NK, DType.BF16, DType.BF16, m, n, k, a, b, c, false);
 * }
 * }</pre>
 */
public final class CublasGemm implements RowMajorGemm, AutoCloseable {
    private final cublasContext handle;
    private final FloatPointer one = new FloatPointer(1f);
    private final FloatPointer zero = new FloatPointer(0f);
    private final String version;

    private CublasGemm(cublasContext handle, String version) {
        this.handle = handle;
        this.version = version;
    }


    /** Loads cuBLAS and creates a handle bound to {@code stream}; throws IllegalStateException saying why it cannot. */
    public static CublasGemm open(Stream stream) {
        try {
            Loader.load(cublas.class);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot load cuBLAS (is libcublas.so.13 on LD_LIBRARY_PATH? bin/gpu-bundle's env.sh "
                    + "looks for it): " + t, t);
        }
        cublasContext h = new cublasContext();
        CublasStatus.check(cublas.cublasCreate_v2(h), "cublasCreate");
        try {
            CublasStatus.check(cublas.cublasSetStream_v2(h, new CUstream_st(new DevicePointer(stream.nativeHandle()))), "cublasSetStream");
            int[] v = new int[1];
            CublasStatus.check(cublas.cublasGetVersion_v2(h, v), "cublasGetVersion");
            return new CublasGemm(h, "cuBLAS " + v[0] / 10000 + "." + (v[0] % 10000) / 100 + "." + v[0] % 100);
        } catch (RuntimeException e) {
            cublas.cublasDestroy_v2(h);
            throw e;
        }
    }

    /** "cuBLAS 13.0.2". */
    public String version() {
        return version;
    }

    static int type(DType t) {
        return switch (t) {
            case BF16 -> cudart.CUDA_R_16BF;
            case F16 -> cudart.CUDA_R_16F;
            case F32 -> cudart.CUDA_R_32F;
            default -> throw new IllegalArgumentException("no cuBLAS GEMM type for " + t);
        };
    }

    /**
     * {@code C = A B (+ C when accumulate)} on row-major operands: A per layout (ld lda), B per
     * layout (ld ldb), C M x N (ld ldc); A and B of type {@code in}, C of type {@code out}. A K x M
     * A reads column-major as M x K, so cuBLAS transposes it as it does an N x K B.
     */
    @Override
    public void gemm(GemmLayouts layouts, DType in, DType out, int m, int n, int k, long a, int lda, long b, int ldb, long c, int ldc,
                     boolean accumulate) {
        int transB = layouts.b() == GemmLayout.NK ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        int transA = layouts.a() == GemmALayout.KM ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        CublasStatus.check(cublas.cublasGemmEx(handle, transB, transA, n, m, k, one, new DevicePointer(b), type(in), ldb,
                new DevicePointer(a), type(in), lda, accumulate ? one : zero, new DevicePointer(c), type(out), ldc,
                cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
    }

    @Override
    public void close() {
        CublasStatus.check(cublas.cublasDestroy_v2(handle), "cublasDestroy");
        one.close();
        zero.close();
    }
}

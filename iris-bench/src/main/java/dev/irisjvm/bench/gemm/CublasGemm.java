package dev.irisjvm.bench.gemm;

import dev.irisjvm.bench.rma.DevicePointer;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.gemm.GemmLayout;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;

/**
 * The cuBLAS baseline of the GEMM sweep (JavaCPP CUDA presets; libcublas comes from the GPU host):
 * {@code cublasGemmEx} with F32 compute ({@code CUBLAS_COMPUTE_32F}), the default algorithm and
 * math mode, enqueued on this library's stream, on the same row-major operands as the Iris GEMM.
 *
 * <p>Row-major through column-major cuBLAS: a row-major M x N C is column-major C^T (N x M) = B^T
 * A^T. Row-major A (M x K) is column-major A^T; a KN B (K x N) is column-major B^T as it is; an NK
 * B (N x K) is column-major K x N, so it is transposed ({@code CUBLAS_OP_T}).
 *
 * <pre>{@code
 * try (CublasGemm cublas = CublasGemm.open(stream)) {
 *     cublas.gemm(GemmLayout.NK, DType.BF16, DType.BF16, m, n, k, a, b, c);
 * }
 * }</pre>
 */
public final class CublasGemm implements AutoCloseable {
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
        check(cublas.cublasCreate_v2(h), "cublasCreate");
        try {
            check(cublas.cublasSetStream_v2(h, new CUstream_st(stream.handle())), "cublasSetStream");
            int[] v = new int[1];
            check(cublas.cublasGetVersion_v2(h, v), "cublasGetVersion");
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

    /** {@code C = A B} on contiguous row-major operands (A M x K, B per layout, C M x N). */
    public void gemm(GemmLayout layout, DType in, DType out, int m, int n, int k, long a, long b, long c) {
        int transB = layout == GemmLayout.NK ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        int ldb = (int) layout.bCols(n, k);
        check(cublas.cublasGemmEx(handle, transB, cublas.CUBLAS_OP_N, n, m, k, one, new DevicePointer(b), type(in), ldb,
                new DevicePointer(a), type(in), k, zero, new DevicePointer(c), type(out), n, cublas.CUBLAS_COMPUTE_32F,
                cublas.CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
    }

    private static void check(int status, String call) {
        if (status != cublas.CUBLAS_STATUS_SUCCESS) {
            String text;
            try {
                text = cublas.cublasGetStatusString(status).getString();
            } catch (RuntimeException e) {
                text = "status " + status;
            }
            throw new IllegalStateException(call + " failed: " + text + " (" + status + ")");
        }
    }

    @Override
    public void close() {
        check(cublas.cublasDestroy_v2(handle), "cublasDestroy");
        one.close();
        zero.close();
    }
}

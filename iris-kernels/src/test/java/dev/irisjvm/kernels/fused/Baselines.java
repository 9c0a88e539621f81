package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.ccl.NcclComm;
import dev.irisjvm.kernels.ccl.NcclComm.DevicePointer;
import dev.irisjvm.kernels.gemm.GemmLayout;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;

/**
 * What the fused operations are compared with in the large GPU tests: cuBLAS's GEMM
 * ({@code cublasGemmEx}, F32 compute) and NCCL's collectives, on device addresses, enqueued on this
 * library's stream (JavaCPP CUDA presets; the libraries come from the GPU host). Opening is
 * collective; where either library cannot be loaded or initialized on some rank, every rank gets an
 * instance that says why ({@link #reason()}), decided together so that no rank waits in
 * ncclCommInitRank for one that gave up.
 */
final class Baselines implements AutoCloseable {
    private static final int UNIQUE_ID_BYTES = 128;

    private final cublasContext handle;
    private final ncclComm comm;
    private final String reason;
    private final String versions;
    private final FloatPointer one = new FloatPointer(1f);
    private final FloatPointer zero = new FloatPointer(0f);

    private Baselines(cublasContext handle, ncclComm comm, String reason, String versions) {
        this.handle = handle;
        this.comm = comm;
        this.reason = reason;
        this.versions = versions;
    }

    /** Collective. {@code off}: the caller was told not to use them (IRIS_TEST_NCCL=off / IRIS_TEST_CUBLAS=off). */
    static Baselines open(Iris iris, Stream stream, String off) {
        String mine = off;
        String versions = null;
        cublasContext h = null;
        if (mine == null && !"0".equals(System.getenv("NCCL_NVLS_ENABLE"))) {
            mine = "NCCL_NVLS_ENABLE must be 0 (bin/iris-run sets it)";
        }
        if (mine == null) {
            try {
                Loader.load(cublas.class);
                Loader.load(nccl.class);
                h = new cublasContext();
                check(cublas.cublasCreate_v2(h) == cublas.CUBLAS_STATUS_SUCCESS, "cublasCreate");
                check(cublas.cublasSetStream_v2(h, cuda(stream)) == cublas.CUBLAS_STATUS_SUCCESS, "cublasSetStream");
                int[] v = new int[1];
                cublas.cublasGetVersion_v2(h, v);
                int[] n = new int[1];
                nccl.ncclGetVersion(n);
                versions = "cuBLAS " + v[0] / 10000 + "." + (v[0] % 10000) / 100 + "." + v[0] % 100 + ", NCCL " + n[0] / 10000
                        + "." + (n[0] % 10000) / 100 + "." + n[0] % 100;
            } catch (Throwable t) {
                mine = "cannot load cuBLAS / NCCL: " + t;
                if (h != null) {
                    cublas.cublasDestroy_v2(h);
                    h = null;
                }
            }
        }
        String reason = NcclComm.firstReason(iris, mine);
        if (reason != null) {
            if (h != null) cublas.cublasDestroy_v2(h);
            return new Baselines(null, null, reason, versions);
        }
        byte[] id = new byte[UNIQUE_ID_BYTES + 1];
        if (iris.rank() == 0) {
            ncclUniqueId u = new ncclUniqueId();
            if (nccl.ncclGetUniqueId(u) == nccl.ncclSuccess) {
                id[0] = 1;
                for (int i = 0; i < UNIQUE_ID_BYTES; i++) id[1 + i] = u.internal(i);
            }
        }
        id = iris.broadcast(id, 0);
        String failed = id[0] == 0 ? "ncclGetUniqueId failed on rank 0" : null;
        ncclComm c = null;
        if (failed == null) {
            ncclUniqueId u = new ncclUniqueId();
            for (int i = 0; i < UNIQUE_ID_BYTES; i++) u.internal(i, id[1 + i]);
            c = new ncclComm();
            int status = nccl.ncclCommInitRank(c, iris.worldSize(), u, iris.rank());
            if (status != nccl.ncclSuccess) {
                failed = "ncclCommInitRank failed on rank " + iris.rank() + ": status " + status;
                c = null;
            }
        }
        reason = NcclComm.firstReason(iris, failed);
        if (reason != null) {
            if (c != null) nccl.ncclCommDestroy(c);
            cublas.cublasDestroy_v2(h);
            return new Baselines(null, null, reason, versions);
        }
        return new Baselines(h, c, null, versions);
    }

    boolean available() {
        return comm != null;
    }

    String reason() {
        return reason;
    }

    String versions() {
        return versions;
    }

    /**
     * {@code C = A B (+ C when accumulate)} on row-major operands: A M x K (ld K), B per layout
     * (ld = its columns), C M x N (ld N); a row-major C is column-major C^T = B^T A^T.
     */
    void gemm(GemmLayout layout, DType in, DType out, int m, int n, int k, long a, long b, long c, boolean accumulate) {
        int transB = layout == GemmLayout.NK ? cublas.CUBLAS_OP_T : cublas.CUBLAS_OP_N;
        int ldb = (int) layout.bCols(n, k);
        int status = cublas.cublasGemmEx(handle(), transB, cublas.CUBLAS_OP_N, n, m, k, one, new DevicePointer(b), type(in), ldb,
                new DevicePointer(a), type(in), k, accumulate ? one : zero, new DevicePointer(c), type(out), n,
                cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT);
        check(status == cublas.CUBLAS_STATUS_SUCCESS, "cublasGemmEx: status " + status);
    }

    void allGather(long in, long out, long sendCount, DType t, Stream s) {
        int status = nccl.ncclAllGather(new DevicePointer(in), new DevicePointer(out), sendCount, ncclType(t), comm(), cuda(s));
        check(status == nccl.ncclSuccess, "ncclAllGather: status " + status);
    }

    void allReduce(long in, long out, long count, DType t, Stream s) {
        int status = nccl.ncclAllReduce(new DevicePointer(in), new DevicePointer(out), count, ncclType(t), nccl.ncclSum, comm(),
                cuda(s));
        check(status == nccl.ncclSuccess, "ncclAllReduce: status " + status);
    }

    void reduceScatter(long in, long out, long recvCount, DType t, Stream s) {
        int status = nccl.ncclReduceScatter(new DevicePointer(in), new DevicePointer(out), recvCount, ncclType(t), nccl.ncclSum,
                comm(), cuda(s));
        check(status == nccl.ncclSuccess, "ncclReduceScatter: status " + status);
    }

    private cublasContext handle() {
        if (handle == null) throw new IllegalStateException("cuBLAS / NCCL unavailable: " + reason);
        return handle;
    }

    private ncclComm comm() {
        if (comm == null) throw new IllegalStateException("cuBLAS / NCCL unavailable: " + reason);
        return comm;
    }

    private static int type(DType t) {
        return switch (t) {
            case BF16 -> cudart.CUDA_R_16BF;
            case F16 -> cudart.CUDA_R_16F;
            case F32 -> cudart.CUDA_R_32F;
            default -> throw new IllegalArgumentException("no cuBLAS type for " + t);
        };
    }

    private static int ncclType(DType t) {
        return switch (t) {
            case BF16 -> nccl.ncclBfloat16;
            case F16 -> nccl.ncclFloat16;
            case F32 -> nccl.ncclFloat32;
            default -> throw new IllegalArgumentException("no NCCL type for " + t);
        };
    }

    private static CUstream_st cuda(Stream s) {
        return new CUstream_st(s.handle());
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new IllegalStateException(what + " failed");
    }

    /** Destroys the communicator and the handle (after the streams they used were synchronized). */
    @Override
    public void close() {
        if (comm != null) nccl.ncclCommDestroy(comm);
        if (handle != null) cublas.cublasDestroy_v2(handle);
        one.close();
        zero.close();
    }
}

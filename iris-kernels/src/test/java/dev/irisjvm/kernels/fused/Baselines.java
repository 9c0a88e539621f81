package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.gemm.GemmLayout;

/**
 * What the fused operations are compared with in the large GPU tests: cuBLAS's GEMM ({@link
 * CublasGemm}) and NCCL's collectives ({@link NcclComm}), on device addresses, enqueued on this
 * library's stream. Opening is collective; where either library cannot be loaded or initialized on
 * some rank, every rank gets an instance that says why ({@link #reason()}), decided together so
 * that no rank waits in ncclCommInitRank for one that gave up.
 */
final class Baselines implements AutoCloseable {
    private final CublasGemm cublas;
    private final NcclComm nccl;
    private final String reason;

    private Baselines(CublasGemm cublas, NcclComm nccl, String reason) {
        this.cublas = cublas;
        this.nccl = nccl;
        this.reason = reason;
    }

    /** Collective. {@code off}: the caller was told not to use them (IRIS_TEST_NCCL=off / IRIS_TEST_CUBLAS=off). */
    static Baselines open(Iris iris, Stream stream, String off) {
        String mine = off;
        CublasGemm cublas = null;
        if (mine == null) {
            try {
                cublas = CublasGemm.open(stream);
            } catch (RuntimeException | LinkageError e) {
                mine = String.valueOf(e.getMessage());
            }
        }
        String reason = NcclComm.firstReason(iris, mine);
        if (reason != null) {
            if (cublas != null) cublas.close();
            return new Baselines(null, null, reason);
        }
        NcclComm nccl = NcclComm.open(iris);  // collective, and agrees on its own reason
        if (!nccl.available()) {
            cublas.close();
            return new Baselines(null, null, nccl.reason());
        }
        return new Baselines(cublas, nccl, null);
    }

    boolean available() {
        return nccl != null;
    }

    String reason() {
        return reason;
    }

    /** "cuBLAS x.y.z, NCCL x.y.z", or null when unavailable. */
    String versions() {
        return available() ? cublas.version() + ", " + nccl.version() : null;
    }

    /**
     * {@code C = A B (+ C when accumulate)} on row-major operands: A M x K (ld K), B per layout
     * (ld = its columns), C M x N (ld N).
     */
    void gemm(GemmLayout layout, DType in, DType out, int m, int n, int k, long a, long b, long c, boolean accumulate) {
        ready().gemm(layout, in, out, m, n, k, a, b, c, accumulate);
    }

    void allGather(long in, long out, long sendCount, DType t, Stream s) {
        comm().allGather(in, out, sendCount, t, s);
    }

    void allReduce(long in, long out, long count, DType t, Stream s) {
        comm().allReduce(in, out, count, t, ReduceOp.SUM, s);
    }

    void reduceScatter(long in, long out, long recvCount, DType t, Stream s) {
        comm().reduceScatter(in, out, recvCount, t, ReduceOp.SUM, s);
    }

    private CublasGemm ready() {
        if (cublas == null || nccl == null) throw new IllegalStateException("cuBLAS / NCCL unavailable: " + reason);
        return cublas;
    }

    private NcclComm comm() {
        ready();
        return nccl;
    }

    /** Destroys the communicator and the handle (after the streams they used were synchronized). */
    @Override
    public void close() {
        Resources.closeAll(nccl, cublas);
    }
}

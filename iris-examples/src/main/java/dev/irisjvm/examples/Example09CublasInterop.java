package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;

/**
 * 09 another GPU library beside this one: a row-parallel layer whose local GEMM is cuBLAS's,
 * called through the JavaCPP CUDA presets on a stream cuBLAS's side owns, and whose sum across
 * ranks is this library's all-reduce, ordered after the GEMM by an event that side recorded
 * ({@link Event#wrap}) with no host synchronization in between. Each rank holds X_r (M x K) and
 * W_r (K x N); every rank ends with Y = sum over r of X_r W_r, checked against a double-precision
 * reference within the rounding of K + world float operations.
 *
 * <p>The recipe: make the other library's calls on the GPU this rank uses
 * ({@code cudaSetDevice(iris.device())}); hand symmetric tensors to it by
 * {@link SymTensor#deviceAddress()}; order the two libraries with an event recorded on its stream
 * and waited for on ours (or run both on one stream: {@code cublasSetStream} with
 * {@code iris.stream().nativeHandle()}).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example09CublasInterop
 * </pre>
 * It needs libcudart and libcublas of CUDA 13 on the library path (the GPU bundle's env.sh sets it).
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 summed 2 cuBLAS products of 96 x 80 after cuBLAS's event: OK}.
 */
public final class Example09CublasInterop {
    private static final int M = 96;
    private static final int N = 80;
    private static final int K = 200;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int world = iris.worldSize();
            long seed = Examples.runSeed(iris);
            try {
                Loader.load(cudart.class);
                Loader.load(cublas.class);
            } catch (Throwable t) {
                throw new IllegalStateException("rank " + iris.rank() + ": cannot load the CUDA runtime and cuBLAS through"
                        + " JavaCPP (are libcudart.so.13 and libcublas.so.13 on LD_LIBRARY_PATH?): " + t, t);
            }
            cuda(cudart.cudaSetDevice(iris.device()), "cudaSetDevice");
            CUstream_st theirStream = new CUstream_st();
            CUevent_st gemmDone = new CUevent_st();
            cublasContext handle = new cublasContext();
            cuda(cudart.cudaStreamCreateWithFlags(theirStream, cudart.cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
            cuda(cudart.cudaEventCreateWithFlags(gemmDone, cudart.cudaEventDisableTiming), "cudaEventCreateWithFlags");
            blas(cublas.cublasCreate_v2(handle), "cublasCreate");
            try (SymTensor x = iris.heap().empty(DType.F32, M, K);
                 SymTensor w = iris.heap().empty(DType.F32, K, N);
                 SymTensor partial = iris.heap().full(Float.NaN, DType.F32, M, N);
                 SymTensor y = iris.heap().full(Float.NaN, DType.F32, M, N);
                 Collectives ccl = Collectives.create(iris);
                 FloatPointer one = new FloatPointer(1f);
                 FloatPointer zero = new FloatPointer(0f)) {
                x.copyFrom(Examples.randomFloats(seed, iris.rank(), M * K));
                w.copyFrom(Examples.randomFloats(seed + 1, iris.rank(), K * N));

                // Row-major partial = X W is column-major partial^T = W^T X^T: cuBLAS sees W as N x K, X as K x M.
                blas(cublas.cublasSetStream_v2(handle, theirStream), "cublasSetStream");
                blas(cublas.cublasSgemm_v2(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, N, M, K, one,
                        floats(w.deviceAddress()), N, floats(x.deviceAddress()), K, zero, floats(partial.deviceAddress()), N),
                        "cublasSgemm");
                cuda(cudart.cudaEventRecord(gemmDone, theirStream), "cudaEventRecord");

                try (Event cublasFinished = Event.wrap(gemmDone.address())) {  // not owned: cudaEventDestroy below
                    iris.stream().waitFor(cublasFinished);
                    ccl.allReduce(partial, y, ReduceOp.SUM, iris.stream());
                }
                iris.synchronize();
                check(iris, y.toFloatArray(), seed, world);
                Examples.ok(iris, "summed " + world + " cuBLAS products of " + M + " x " + N + " after cuBLAS's event");
            } finally {
                cublas.cublasDestroy_v2(handle);
                cudart.cudaEventDestroy(gemmDone);
                cudart.cudaStreamDestroy(theirStream);
            }
        }
    }

    /** Y against the double sum of every rank's X_r W_r, within gamma(K + world) of the sum of |x w|. */
    private static void check(Iris iris, float[] got, long seed, int world) {
        double[] sum = new double[M * N];
        double[] magnitudes = new double[M * N];
        for (int r = 0; r < world; r++) {
            float[] x = Examples.randomFloats(seed, r, M * K);
            float[] w = Examples.randomFloats(seed + 1, r, K * N);
            for (int i = 0; i < M; i++) {
                for (int k = 0; k < K; k++) {
                    double a = x[i * K + k];
                    for (int j = 0; j < N; j++) {
                        double p = a * w[k * N + j];
                        sum[i * N + j] += p;
                        magnitudes[i * N + j] += Math.abs(p);
                    }
                }
            }
        }
        double u = 0x1p-24;
        int operations = K + world;
        double gamma = operations * u / (1 - operations * u) + 0x1p-50;
        double[] bound = new double[M * N];
        for (int i = 0; i < bound.length; i++) {
            bound[i] = gamma * magnitudes[i];
        }
        Examples.expectWithin(iris, "Y", got, sum, bound);
    }

    /** A device address as the pointer type JavaCPP's cuBLAS binding takes. */
    private static FloatPointer floats(long deviceAddress) {
        return new FloatPointer(new At(deviceAddress));
    }

    /**
     * A JavaCPP pointer at an address it does not own. A named class, not an anonymous one: inside
     * {@code new Pointer() {{ address = address; }}} both names are the inherited field, and the
     * pointer stays null.
     */
    private static final class At extends Pointer {
        At(long deviceAddress) {
            address = deviceAddress;
        }
    }

    private static void cuda(int status, String call) {
        if (status != cudart.cudaSuccess) {
            throw new IllegalStateException(call + " failed: " + cudart.cudaGetErrorString(status).getString());
        }
    }

    private static void blas(int status, String call) {
        if (status != cublas.CUBLAS_STATUS_SUCCESS) {
            throw new IllegalStateException(call + " failed: " + cublas.cublasGetStatusString(status).getString() + " (" + status + ")");
        }
    }
}

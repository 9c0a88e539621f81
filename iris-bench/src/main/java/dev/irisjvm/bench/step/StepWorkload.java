package dev.irisjvm.bench.step;

import dev.irisjvm.bench.Seeds;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.fused.AllGatherGemm;
import dev.irisjvm.kernels.fused.GemmReduceScatter;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank's tensors of a training step of a tensor-parallel, sequence-parallel MLP
 * {@code y = SiLU(x W1^T) W2^T} (Example11TrainingStep's layer at any size), and the step written
 * twice on them: with the library's fused operations, and with cuBLAS then NCCL in sequence. Both
 * run on this rank's stream and leave the same tensors behind: y and dX (this rank's rows), dW1 and
 * dW2 (F32, accumulated with beta = 1 as a training loop does). BF16 in, inputs uniform and generated
 * on the GPU: x's and dY's rows of this rank in [-1, 1), W1 in ±1/sqrt(H), W2 in ±1/sqrt(F).
 * <pre>
 *   forward    h   = gather(x) W1_r^T      fused: AllGatherGemm        baseline: ncclAllGather, cuBLAS
 *              a   = SiLU(h)               11_training_step.cu in both
 *              y   = RS(a W2_r^T)          fused: GemmReduceScatter    baseline: cuBLAS, ncclReduceScatter
 *   backward   da  = gather(dy) W2_r       fused: AllGatherGemm (KN)   baseline: ncclAllGather, cuBLAS
 *              dW2 += gather(dy)^T a       Gemm KM_KN                  cuBLAS
 *              dh  = da SiLU'(h)           11_training_step.cu in both
 *              dx  = RS(dh W1_r)           fused: GemmReduceScatter    baseline: cuBLAS, ncclReduceScatter
 *              dW1 += dh^T gather(x)       Gemm KM_KN                  cuBLAS
 * </pre>
 * The gathered x and dY are symmetric: the fused all-gathers push peers' rows into them, NCCL
 * gathers into them in place (this rank's rows are already where they belong). Allocation is
 * collective.
 */
final class StepWorkload implements AutoCloseable {
    static final DType TYPE = DType.BF16;
    private static final int THREADS = 256;

    private final Iris iris;
    private final StepShape shape;
    private final DeviceModule elementwise;
    private final Stream stream;
    private final int world;
    private final int rank;
    private final int rows;  // this rank's tokens
    private final int ffnLocal;
    private final List<AutoCloseable> owned = new ArrayList<>();
    final SymTensor xg;     // [T, H]   gathered x; this rank's rows are the input
    final SymTensor dyg;    // [T, H]   gathered dY; this rank's rows are the input
    final SymTensor w1;     // [F_r, H]
    final SymTensor w2;     // [H, F_r]
    final SymTensor h;      // [T, F_r]
    final SymTensor a;
    final SymTensor da;
    final SymTensor dh;
    final SymTensor y;      // [T_r, H]
    final SymTensor dx;
    final SymTensor dw1;    // [F_r, H] F32
    final SymTensor dw2;    // [H, F_r] F32
    private final SymTensor partial;  // [T, H] the baseline's GEMM output before its reduce-scatter
    private final AllGatherGemm up;
    private final GemmReduceScatter down;
    private final AllGatherGemm downBackward;
    private final GemmReduceScatter upBackward;

    /** Collective: every tensor and fused operation of {@code shape} on this rank, inputs from {@code seed}. */
    StepWorkload(Iris iris, StepShape shape, DeviceModule elementwise, long seed) {
        this.iris = iris;
        this.shape = shape;
        this.elementwise = elementwise;
        this.stream = iris.stream();
        this.world = iris.worldSize();
        this.rank = iris.rank();
        this.rows = shape.tokensPerRank(world);
        this.ffnLocal = shape.ffnPerRank(world);
        int t = shape.tokens();
        int hidden = shape.hidden();
        SymmetricHeap heap = iris.heap();
        try {
            double w1Scale = 1 / Math.sqrt(hidden);
            double w2Scale = 1 / Math.sqrt(shape.ffn());
            xg = own(heap.empty(TYPE, t, hidden));
            dyg = own(heap.empty(TYPE, t, hidden));
            w1 = own(heap.uniform(Seeds.ofRank(seed + 3, rank), -w1Scale, w1Scale, TYPE, ffnLocal, hidden));
            w2 = own(heap.uniform(Seeds.ofRank(seed + 4, rank), -w2Scale, w2Scale, TYPE, hidden, ffnLocal));
            h = own(heap.empty(TYPE, t, ffnLocal));
            a = own(heap.empty(TYPE, t, ffnLocal));
            da = own(heap.empty(TYPE, t, ffnLocal));
            dh = own(heap.empty(TYPE, t, ffnLocal));
            y = own(heap.empty(TYPE, rows, hidden));
            dx = own(heap.empty(TYPE, rows, hidden));
            dw1 = own(heap.empty(DType.F32, ffnLocal, hidden));
            dw2 = own(heap.empty(DType.F32, hidden, ffnLocal));
            partial = own(heap.empty(TYPE, t, hidden));
            try (SymTensor x = heap.uniform(Seeds.ofRank(seed + 1, rank), -1, 1, TYPE, rows, hidden);
                 SymTensor dy = heap.uniform(Seeds.ofRank(seed + 2, rank), -1, 1, TYPE, rows, hidden)) {
                Memcpy.deviceToDevice(myRows(xg), x.deviceAddress(), x.byteSize(), stream);
                Memcpy.deviceToDevice(myRows(dyg), dy.deviceAddress(), dy.byteSize(), stream);
                iris.synchronize();
            }
            up = own(AllGatherGemm.create(iris, t, ffnLocal, hidden));
            down = own(GemmReduceScatter.create(iris, t, hidden, ffnLocal));
            downBackward = own(AllGatherGemm.create(iris, t, ffnLocal, hidden));
            upBackward = own(GemmReduceScatter.create(iris, t, hidden, ffnLocal));
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T own(T t) {
        owned.add(t);
        return t;
    }

    /** Where this rank's rows of a gathered [T, H] tensor start. */
    private long myRows(SymTensor gathered) {
        return gathered.deviceAddress() + (long) rank * rows * shape.hidden() * TYPE.byteSize();
    }

    // ---- the step, two ways -------------------------------------------------------------------------

    /** Enqueues the step with the fused operations. */
    void fused(Gemm gemm) {
        up.run(xg, w1, GemmLayout.NK, null, h, stream);
        silu(h, a);
        down.run(a, w2, GemmLayout.NK, null, y, stream);
        downBackward.run(dyg, w2, GemmLayout.KN, null, da, stream);
        gemm.matmul(dyg, a, GemmLayouts.KM_KN, dw2, 1f, 1f, stream);
        siluBackward();
        upBackward.run(dh, w1, GemmLayout.KN, null, dx, stream);
        gemm.matmul(dh, xg, GemmLayouts.KM_KN, dw1, 1f, 1f, stream);
    }

    /** Enqueues the same step with cuBLAS then NCCL, in sequence on one stream. */
    void baseline(CublasGemm cublas, NcclComm nccl) {
        gatherX(nccl);
        cublasUp(cublas);
        silu(h, a);
        cublasDown(cublas);
        reduceY(nccl);
        gatherDy(nccl);
        cublasDa(cublas);
        cublasDw2(cublas);
        siluBackward();
        cublasDx(cublas);
        reduceDx(nccl);
        cublasDw1(cublas);
    }

    /** The baseline's six GEMMs alone, on the tensors the step leaves. */
    void cublasGemms(CublasGemm cublas) {
        cublasUp(cublas);
        cublasDown(cublas);
        cublasDa(cublas);
        cublasDw2(cublas);
        cublasDx(cublas);
        cublasDw1(cublas);
    }

    /** The same six GEMMs with the library's {@link Gemm}, without communication. */
    void irisGemms(Gemm gemm) {
        gemm.matmul(xg, w1, GemmLayout.NK, h, stream);
        gemm.matmul(a, w2, GemmLayout.NK, partial, stream);
        gemm.matmul(dyg, w2, GemmLayout.KN, da, stream);
        gemm.matmul(dyg, a, GemmLayouts.KM_KN, dw2, 1f, 1f, stream);
        gemm.matmul(dh, w1, GemmLayout.KN, partial, stream);
        gemm.matmul(dh, xg, GemmLayouts.KM_KN, dw1, 1f, 1f, stream);
    }

    /** The baseline's four collectives alone. */
    void collectives(NcclComm nccl) {
        gatherX(nccl);
        reduceY(nccl);
        gatherDy(nccl);
        reduceDx(nccl);
    }

    private void gatherX(NcclComm nccl) {
        nccl.allGather(myRows(xg), xg.deviceAddress(), (long) rows * shape.hidden(), TYPE, stream);
    }

    private void gatherDy(NcclComm nccl) {
        nccl.allGather(myRows(dyg), dyg.deviceAddress(), (long) rows * shape.hidden(), TYPE, stream);
    }

    private void reduceY(NcclComm nccl) {
        nccl.reduceScatter(partial.deviceAddress(), y.deviceAddress(), (long) rows * shape.hidden(), TYPE, ReduceOp.SUM, stream);
    }

    private void reduceDx(NcclComm nccl) {
        nccl.reduceScatter(partial.deviceAddress(), dx.deviceAddress(), (long) rows * shape.hidden(), TYPE, ReduceOp.SUM, stream);
    }

    private void cublasUp(CublasGemm cublas) {  // h = x W1^T
        cublas.gemm(GemmLayout.NK, TYPE, TYPE, shape.tokens(), ffnLocal, shape.hidden(), xg.deviceAddress(), w1.deviceAddress(),
                h.deviceAddress(), false);
    }

    private void cublasDown(CublasGemm cublas) {  // partial = a W2^T
        cublas.gemm(GemmLayout.NK, TYPE, TYPE, shape.tokens(), shape.hidden(), ffnLocal, a.deviceAddress(), w2.deviceAddress(),
                partial.deviceAddress(), false);
    }

    private void cublasDa(CublasGemm cublas) {  // da = dy W2
        cublas.gemm(GemmLayout.KN, TYPE, TYPE, shape.tokens(), ffnLocal, shape.hidden(), dyg.deviceAddress(), w2.deviceAddress(),
                da.deviceAddress(), false);
    }

    private void cublasDw2(CublasGemm cublas) {  // dW2 += dy^T a
        cublas.gemm(GemmLayouts.KM_KN, TYPE, DType.F32, shape.hidden(), ffnLocal, shape.tokens(), dyg.deviceAddress(),
                a.deviceAddress(), dw2.deviceAddress(), true);
    }

    private void cublasDx(CublasGemm cublas) {  // partial = dh W1
        cublas.gemm(GemmLayout.KN, TYPE, TYPE, shape.tokens(), shape.hidden(), ffnLocal, dh.deviceAddress(), w1.deviceAddress(),
                partial.deviceAddress(), false);
    }

    private void cublasDw1(CublasGemm cublas) {  // dW1 += dh^T x
        cublas.gemm(GemmLayouts.KM_KN, TYPE, DType.F32, ffnLocal, shape.hidden(), shape.tokens(), dh.deviceAddress(),
                xg.deviceAddress(), dw1.deviceAddress(), true);
    }

    private void silu(SymTensor in, SymTensor out) {
        launch("silu_forward", in, out, in.numel());
    }

    private void siluBackward() {
        launch("silu_backward", da, h, dh, dh.numel());
    }

    /** An elementwise kernel whose last argument is the element count. */
    private void launch(String kernel, Object... args) {
        long n = (Long) args[args.length - 1];
        int blocks = (int) Math.min(1024, (n + THREADS - 1) / THREADS);
        elementwise.launch(kernel, LaunchShape.of(blocks, THREADS), stream, args);
    }

    // ---- the check ----------------------------------------------------------------------------------

    /** What a step writes, poisoned (NaN for the BF16 ones) and the accumulated gradients zeroed, before a checked step. */
    void poison() {
        for (SymTensor t : new SymTensor[] {h, a, da, dh, y, dx, partial}) {
            Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        }
        Memcpy.memset(dw1.deviceAddress(), 0, dw1.byteSize(), stream);
        Memcpy.memset(dw2.deviceAddress(), 0, dw2.byteSize(), stream);
    }

    /** The tensors a step leaves that the check compares, in {@link StepOutputCheck#NAMES}' order. */
    SymTensor[] outputs() {
        return new SymTensor[] {y, dx, dw1, dw2};
    }

    /** Collective: waits for this rank's stream and frees every tensor and operation. */
    @Override
    public void close() {
        iris.synchronize();
        RuntimeException first = null;
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                if (first == null) first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
            }
        }
        owned.clear();
        if (first != null) throw first;
    }
}

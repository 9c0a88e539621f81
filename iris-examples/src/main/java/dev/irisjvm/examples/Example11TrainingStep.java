package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.fused.AllGatherGemm;
import dev.irisjvm.kernels.fused.GemmReduceScatter;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.Arrays;
import java.util.Locale;

/**
 * 11 a training step of a tensor-parallel transformer MLP, {@code y = SiLU(x W1^T) W2^T}, sequence
 * parallel as in Megatron-LM: every rank holds its tokens' rows of x and y and its shard of both
 * weights (W1's rows, W2's columns: F_r = {@value #FFN_PER_RANK} of the FFN's units).
 * <pre>
 *   forward    h  = gather(x) W1_r^T            AllGatherGemm,      W1_r stored F_r x H (NK)
 *              a  = SiLU(h)                      11_training_step.cu
 *              y  = reduce-scatter(a W2_r^T)     GemmReduceScatter,  W2_r stored H x F_r (NK)
 *   loss       L  = mean (y - target)^2 / 2, dy  11_training_step.cu
 *   backward   da = gather(dy) W2_r              AllGatherGemm,      W2_r as stored: K x N (KN)
 *              dW2_r += gather(dy)^T a           Gemm, GemmLayouts.KM_KN, F32, beta = 1
 *              dh = da SiLU'(h)                  11_training_step.cu
 *              dx = reduce-scatter(dh W1_r)      GemmReduceScatter,  W1_r as stored: K x N (KN)
 *              dW1_r += dh^T gather(x)           Gemm, GemmLayouts.KM_KN, F32, beta = 1
 *   update     W -= lr dW on the F32 masters, BF16 working copies   11_training_step.cu
 * </pre>
 * The all-gathers hide behind the GEMMs they feed and the reduce-scatters behind the GEMMs that
 * produce them; the weight gradients read the gathered x and dy those calls left behind. The
 * elementwise kernels are compiled at run time. {@link TrainingStepReference} checks every tensor
 * of every step against a double-precision computation from the step's own inputs, within bounds
 * derived from BF16 and F32 rounding, and the loss must fall from step to step. One rank per GPU,
 * or several ranks sharing one; needs an H100 or H200 (sm_90a).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example11TrainingStep
 * </pre>
 * Expected output, among the log lines, one line per rank (the losses vary with the run's seed):
 * {@code [0] rank 0 trained 3 steps of a 256 x 256 x 512 MLP on 2 ranks, loss 0.67 -> 0.60 -> 0.55, every tensor within its bound: OK}.
 */
public final class Example11TrainingStep implements AutoCloseable {
    /** This rank's tokens: one row of 128 x 256 tiles, so that the sequence splits over any world size. */
    static final int TOKENS_PER_RANK = 128;
    static final int HIDDEN = 256;
    /** This rank's units of the FFN (the layer's width is world times this). */
    static final int FFN_PER_RANK = 256;
    static final int STEPS = 3;
    /** The loss is a mean over tokens x hidden elements, so its gradients are small: a large step. */
    static final float LEARNING_RATE = 8f;
    private static final int THREADS = 256;

    private final Iris iris;
    private final DeviceModule kernels;
    final int tokens;
    private final AllGatherGemm up;
    private final GemmReduceScatter down;
    private final AllGatherGemm downBackward;
    private final GemmReduceScatter upBackward;
    private final Gemm gemm;
    // Symmetric: peers push their rows into these.
    final SymTensor x;       // [T, H]   the gathered input; this rank fills its rows
    final SymTensor dy;      // [T, H]   the gathered output gradient; this rank computes its rows
    // Local (heap tensors, as the fused operations take them).
    final SymTensor target;  // [T / world, H]
    final SymTensor w1;      // [F_r, H] F32 master, and its BF16 working copy and gradient
    final SymTensor w1Bf16;
    final SymTensor dw1;
    final SymTensor w2;      // [H, F_r]
    final SymTensor w2Bf16;
    final SymTensor dw2;
    final SymTensor h;       // [T, F_r]
    final SymTensor a;
    final SymTensor da;
    final SymTensor dh;
    final SymTensor y;       // [T / world, H]
    final SymTensor dx;
    final SymTensor loss;    // [1] F32: this rank's part of the mean

    /** Collective: the layer's operations and tensors, the input, the target and the initial weights from {@code seed}. */
    Example11TrainingStep(Iris iris, DeviceModule kernels, long seed) {
        this.iris = iris;
        this.kernels = kernels;
        int world = iris.worldSize();
        int rank = iris.rank();
        tokens = TOKENS_PER_RANK * world;
        up = AllGatherGemm.create(iris, tokens, FFN_PER_RANK, HIDDEN);
        down = GemmReduceScatter.create(iris, tokens, HIDDEN, FFN_PER_RANK);
        downBackward = AllGatherGemm.create(iris, tokens, FFN_PER_RANK, HIDDEN);
        upBackward = GemmReduceScatter.create(iris, tokens, HIDDEN, FFN_PER_RANK);
        gemm = Gemm.create();
        SymmetricHeap heap = iris.heap();
        // What the step computes starts as NaN, so that anything it failed to write fails the checks.
        x = heap.full(Float.NaN, DType.BF16, tokens, HIDDEN);
        dy = heap.full(Float.NaN, DType.BF16, tokens, HIDDEN);
        target = heap.empty(DType.BF16, TOKENS_PER_RANK, HIDDEN);
        w1 = heap.empty(DType.F32, FFN_PER_RANK, HIDDEN);
        w1Bf16 = heap.full(Float.NaN, DType.BF16, FFN_PER_RANK, HIDDEN);
        dw1 = heap.full(Float.NaN, DType.F32, FFN_PER_RANK, HIDDEN);
        w2 = heap.empty(DType.F32, HIDDEN, FFN_PER_RANK);
        w2Bf16 = heap.full(Float.NaN, DType.BF16, HIDDEN, FFN_PER_RANK);
        dw2 = heap.full(Float.NaN, DType.F32, HIDDEN, FFN_PER_RANK);
        h = heap.full(Float.NaN, DType.BF16, tokens, FFN_PER_RANK);
        a = heap.full(Float.NaN, DType.BF16, tokens, FFN_PER_RANK);
        da = heap.full(Float.NaN, DType.BF16, tokens, FFN_PER_RANK);
        dh = heap.full(Float.NaN, DType.BF16, tokens, FFN_PER_RANK);
        y = heap.full(Float.NaN, DType.BF16, TOKENS_PER_RANK, HIDDEN);
        dx = heap.full(Float.NaN, DType.BF16, TOKENS_PER_RANK, HIDDEN);
        loss = heap.full(Float.NaN, DType.F32, 1);

        x.chunk(rank, world).copyFrom(input(seed, rank));
        target.copyFrom(target(seed, rank));
        w1.copyFrom(initialW1(seed, rank));
        w2.copyFrom(initialW2(seed, rank, world));
        elementwise("cast_to_bf16", w1, w1Bf16, w1.numel());
        elementwise("cast_to_bf16", w2, w2Bf16, w2.numel());
        iris.synchronize();
    }

    /** Enqueues one training step on the rank's stream: forward, loss, backward, SGD update. */
    void step() {
        Stream s = iris.stream();
        elementwise("zero_grad", dw1, dw1.numel());
        elementwise("zero_grad", dw2, dw2.numel());
        elementwise("zero_grad", loss, 1L);

        up.run(x, w1Bf16, GemmLayout.NK, null, h, s);
        elementwise("silu_forward", h, a, h.numel());
        down.run(a, w2Bf16, GemmLayout.NK, null, y, s);

        float scale = (float) (1.0 / ((double) tokens * HIDDEN));
        elementwise("mse_loss", y, target, dy.chunk(iris.rank(), iris.worldSize()), loss, scale, y.numel());

        downBackward.run(dy, w2Bf16, GemmLayout.KN, null, da, s);
        gemm.matmul(dy, a, GemmLayouts.KM_KN, dw2, 1f, 1f, s);
        elementwise("silu_backward", da, h, dh, dh.numel());
        upBackward.run(dh, w1Bf16, GemmLayout.KN, null, dx, s);
        gemm.matmul(dh, x, GemmLayouts.KM_KN, dw1, 1f, 1f, s);

        elementwise("sgd_update", w1, dw1, w1Bf16, LEARNING_RATE, w1.numel());
        elementwise("sgd_update", w2, dw2, w2Bf16, LEARNING_RATE, w2.numel());
    }

    /** A kernel of 11_training_step.cu whose last argument is the element count: enough blocks for one element per thread. */
    private void elementwise(String kernel, Object... args) {
        long n = (Long) args[args.length - 1];
        int blocks = (int) Math.min(1024, (n + THREADS - 1) / THREADS);
        kernels.launch(kernel, LaunchShape.of(blocks, THREADS), iris.stream(), args);
    }

    // ---- the data: any rank can rebuild any rank's, for the reference ----------------------------

    /** Rank {@code r}'s tokens of x: standard normal, TOKENS_PER_RANK x HIDDEN. */
    static float[] input(long seed, int r) {
        return Examples.randomFloats(seed ^ 0x11, r, TOKENS_PER_RANK * HIDDEN);
    }

    static float[] target(long seed, int r) {
        return Examples.randomFloats(seed ^ 0x22, r, TOKENS_PER_RANK * HIDDEN);
    }

    /** Rank {@code r}'s rows of W1, normal with variance 1 / HIDDEN. */
    static float[] initialW1(long seed, int r) {
        return scaled(Examples.randomFloats(seed ^ 0x33, r, FFN_PER_RANK * HIDDEN), 1 / Math.sqrt(HIDDEN));
    }

    /** Rank {@code r}'s columns of W2, normal with variance 1 / (the layer's FFN width). */
    static float[] initialW2(long seed, int r, int world) {
        return scaled(Examples.randomFloats(seed ^ 0x44, r, HIDDEN * FFN_PER_RANK), 1 / Math.sqrt(FFN_PER_RANK * world));
    }

    private static float[] scaled(float[] v, double factor) {
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (v[i] * factor);
        }
        return v;
    }

    @Override
    public void close() {
        iris.synchronize();
        for (SymTensor t : new SymTensor[] {loss, dx, y, dh, da, a, h, dw2, w2Bf16, w2, dw1, w1Bf16, w1, target, dy, x}) {
            t.close();
        }
        gemm.close();
        upBackward.close();
        downBackward.close();
        down.close();
        up.close();
    }

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = Examples.hopperCompiler(iris).compileResource(Example11TrainingStep.class,
                         "11_training_step.cu").load();
                 Example11TrainingStep mlp = new Example11TrainingStep(iris, kernels, seed)) {
                TrainingStepReference reference = new TrainingStepReference(iris, mlp, seed);
                double[] losses = new double[STEPS];
                for (int step = 0; step < STEPS; step++) {
                    mlp.step();
                    losses[step] = reference.check(step);
                }
                for (int step = 1; step < STEPS; step++) {
                    if (!(losses[step] < losses[step - 1])) {
                        throw new IllegalStateException("rank " + iris.rank() + ": the loss did not fall at step " + step + ": "
                                + Arrays.toString(losses));
                    }
                }
                StringBuilder falling = new StringBuilder();
                for (double l : losses) {
                    falling.append(falling.length() == 0 ? "" : " -> ").append(String.format(Locale.ROOT, "%.2f", l));
                }
                Examples.ok(iris, "trained " + STEPS + " steps of a " + mlp.tokens + " x " + HIDDEN + " x "
                        + FFN_PER_RANK * iris.worldSize() + " MLP on " + iris.worldSize() + " ranks, loss " + falling
                        + ", every tensor within its bound");
            }
        }
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.ScenarioConfigs;
import dev.irisjvm.kernels.SmHog;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.fused.FusedReference.Expected;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmALayout;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.gemm.GemmReference.Reference;
import dev.irisjvm.kernels.gemm.GemmReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * The fused GEMM + communication operations ({@link GemmAllScatter}, {@link GemmAllReduce}, {@link
 * GemmReduceScatter}, {@link AllGatherGemm}) on every rank of a real multi-GPU job, run by {@link
 * FusedGpuTest} through the launcher; the exit code is the number of failed scenarios.
 *
 * <p>Rules every scenario follows:
 * <ul>
 * <li>Inputs are fresh uniform values in [-1, 1), rounded to the input dtype, from seeds that mix
 *     the run seed (broadcast from rank 0, printed, repeatable with {@code IRIS_TEST_SEED}), the
 *     case and the owning rank; every rank regenerates every peer's inputs on the host for the
 *     double-precision reference.</li>
 * <li>Outputs are poisoned first (all bytes 0xFF, a NaN in BF16 and F16), and so are the rows of a
 *     gathered A that the peers must push; padding columns up to ldc must still be poison after it.
 *     The ranks meet on the host after poisoning, before any call, so that no peer stores into an
 *     output before it was poisoned.</li>
 * <li>Small shapes, ragged where the operation allows it, are compared element by element with the
 *     CPU reference within {@link FusedReference}'s bounds: {@link GemmErrorBound#element} for a
 *     plain element, and for a reduced one the partials' bounds plus the F32 sum's and the final
 *     rounding's. All-gather + GEMM's gathered A must equal every rank's rows bit for bit.</li>
 * <li>The large shape, 2048 x 2048 x 2048 (global M x N x K, split over the ranks as the layer
 *     splits it), is compared with cuBLAS then NCCL on the same device inputs, every element within
 *     the sum of both implementations' bounds (S = sum |a b| from an F32 cuBLAS GEMM of |A| and
 *     |B|, reduced or gathered with NCCL), and 512 sampled elements with the exact reference.
 *     cuBLAS and NCCL are required unless {@code IRIS_TEST_NCCL=off}.</li>
 * <li>Checks are collected and thrown at the end of a scenario; every scenario ends with
 *     {@code iris.hostBarrier()}; every rank allocates the same heap tensors in the same order.</li>
 * </ul>
 */
public final class FusedScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "fused_all_scatter_small",
            "fused_all_reduce_small",
            "fused_reduce_scatter_small",
            "fused_all_gather_gemm_small",
            "fused_column_parallel_backward",
            "fused_row_parallel_backward",
            "fused_back_to_back",
            "fused_all_scatter_entry_handshake",
            "fused_graph_replay",
            "fused_tracing",
            "fused_large_vs_cublas_nccl",
            "fused_all_gather_split_k_one_sm_free",
            "fused_all_gather_split_k_four_sms_free",
            "fused_misuse",
            "fused_timeout_names_site");

    static final long HEAP_BYTES = 2L << 30;
    static final long DEVICE_TIMEOUT_MS = 10_000;
    static final int PAD = 8;
    static final int SAMPLES = 512;

    private final Baselines baselines;
    private final boolean baselinesRequired;
    private final long runSeed;
    /**
     * The mainloop the operations created without one run here ({@value GemmMainloop#VARIABLE} or
     * the GPU): every scenario covers the variants, tile widths and split-K of its kernels, and
     * checks that the Hopper kernels' extras are refused on the portable ones.
     */
    private final GemmMainloop mainloop;

    private FusedScenarios(Iris iris, Baselines baselines, long runSeed) {
        super(iris, iris.world());
        this.mainloop = GemmMainloop.AUTO.resolve(iris.deviceProperties());
        this.runSeed = runSeed;
        this.baselines = baselines;
        this.baselinesRequired = !NcclComm.switchedOffByEnvironment();
    }

    public static void main(String[] argv) throws Exception {
        IrisConfig config = ScenarioConfigs.of(HEAP_BYTES, Duration.ofMillis(DEVICE_TIMEOUT_MS));
        ScenarioJob.run(config, (iris, runSeed) -> {
            boolean off = NcclComm.switchedOffByEnvironment();
            try (Baselines baselines = Baselines.open(iris, iris.stream(), off ? "IRIS_TEST_NCCL=off" : null)) {
                System.out.println(TestSeeds.banner("fused", iris, runSeed) + ", "
                        + (baselines.available() ? baselines.versions() : "cuBLAS / NCCL unavailable: " + baselines.reason()));
                FusedScenarios s = new FusedScenarios(iris, baselines, runSeed);
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("fused_all_scatter_small", () -> s.small(FusedOp.ALL_SCATTER));
                bodies.put("fused_all_reduce_small", () -> s.small(FusedOp.ALL_REDUCE));
                bodies.put("fused_reduce_scatter_small", () -> s.small(FusedOp.REDUCE_SCATTER));
                bodies.put("fused_all_gather_gemm_small", () -> s.small(FusedOp.ALL_GATHER));
                bodies.put("fused_column_parallel_backward", s::columnParallelBackward);
                bodies.put("fused_row_parallel_backward", s::rowParallelBackward);
                bodies.put("fused_back_to_back", s::backToBack);
                bodies.put("fused_all_scatter_entry_handshake", s::allScatterEntryHandshake);
                bodies.put("fused_graph_replay", s::graphReplay);
                bodies.put("fused_tracing", s::tracing);
                bodies.put("fused_large_vs_cublas_nccl", s::large);
                bodies.put("fused_all_gather_split_k_one_sm_free", () -> s.allGatherBesideHeldSms(1));
                bodies.put("fused_all_gather_split_k_four_sms_free", () -> s.allGatherBesideHeldSms(4));
                bodies.put("fused_misuse", s::misuse);
                bodies.put("fused_timeout_names_site", s::timeoutNamesSite);  // last: it leaves rank 0's barriers ahead
                int failed = ScenarioRunner.runTable(bodies, SCENARIOS, s.iris::hostBarrier);
                iris.synchronize();
                return failed;
            }
        });
    }

    // =============================================================================================
    // one problem: every rank's host data, this rank's tensors, the reference
    // =============================================================================================

    /**
     * A fused problem in the kernel's terms (all-scatter: n is N_local; the reductions: k is
     * K_local; all-gather: m is the gathered M): every rank's inputs on the host (A shared by all
     * ranks for all-scatter, A's row block per rank for all-gather), this rank's tensors, the
     * reference of this rank's output.
     */
    final class Problem implements AutoCloseable {
        final FusedOp op;
        final int m;
        final int n;
        final int k;
        final DType dtype;
        final GemmLayout layout;
        final boolean withBias;
        final int pad;
        final HostMatrix[] a = new HostMatrix[world];
        final HostMatrix[] b = new HostMatrix[world];
        final float[][] bias = new float[world][];
        final SymTensor ta;
        final SymTensor tb;
        final SymTensor tbias;
        final SymTensor tc;
        private final List<SymTensor> owned = new ArrayList<>();

        Problem(FusedOp op, int m, int n, int k, DType dtype, GemmLayout layout, boolean withBias, int pad, String tag) {
            this(op, m, n, k, dtype, layout, withBias, pad, tag, null);
        }

        /** {@code gathered}: all-gather's A to use instead of a tensor of its own (not owned). */
        Problem(FusedOp op, int m, int n, int k, DType dtype, GemmLayout layout, boolean withBias, int pad, String tag,
                SymTensor gathered) {
            this.op = op;
            this.m = m;
            this.n = n;
            this.k = k;
            this.dtype = dtype;
            this.layout = layout;
            this.withBias = withBias;
            this.pad = pad;
            generate(tag);
            try {
                ta = gathered != null ? gathered : own(heap.empty(dtype, m, k));
                tb = own(heap.empty(dtype, layout.bRows(n, k), layout.bCols(n, k)));
                tbias = withBias ? own(heap.empty(dtype, n)) : null;
                tc = own(heap.empty(dtype, outRows(), ldc()));
                fill(gathered == null);
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private SymTensor own(SymTensor t) {
            owned.add(t);
            return t;
        }

        private void generate(String tag) {
            for (int r = 0; r < world; r++) {
                a[r] = switch (op) {
                    case ALL_SCATTER -> r == 0 ? HostMatrix.random(seed(tag, 1), dtype, m, k) : a[0];
                    case ALL_GATHER -> HostMatrix.random(seed(tag, 1, r), dtype, m / world, k);
                    default -> HostMatrix.random(seed(tag, 1, r), dtype, m, k);
                };
                b[r] = HostMatrix.random(seed(tag, 2, r), dtype, (int) layout.bRows(n, k), (int) layout.bCols(n, k));
                bias[r] = withBias ? HostMatrix.random(seed(tag, 3, r), dtype, 1, n).values() : null;
            }
        }

        /** Uploads this rank's inputs and poisons C (and, for all-gather, the peers' rows of A when {@code wholeA}). */
        void fill(boolean wholeA) {
            if (op == FusedOp.ALL_GATHER) {
                int rows = m / world;
                if (wholeA) {
                    ta.copyFrom(FusedReference.bytes(a[rank], k, m, rank * rows));
                } else {
                    Memcpy.hostToDevice(ta.deviceAddress() + (long) rank * rows * k * 2, new org.bytedeco.javacpp.BytePointer(
                            a[rank].bytes()), (long) rows * k * 2, stream);
                    iris.synchronize();
                }
            } else {
                ta.copyFrom(a[rank].bytes());
            }
            tb.copyFrom(b[rank].bytes());
            if (tbias != null) {
                tbias.copyFrom(new HostMatrix(dtype, 1, n, bias[rank]).bytes());
            }
            poison(tc);
        }

        /** New inputs of the same shapes into the same tensors (for graph replays). */
        void refill(String tag) {
            generate(tag);
            fill(true);
        }

        void run(FusedGemm g, Stream s, boolean replayable) {
            if (replayable) {
                g.runReplayable(ta, tb, layout, tbias, tc, s);
            } else {
                g.run(ta, tb, layout, tbias, tc, s);
            }
        }

        int outRows() {
            return op == FusedOp.REDUCE_SCATTER ? m / world : m;
        }

        int outCols() {
            return op == FusedOp.ALL_SCATTER ? world * n : n;
        }

        int ldc() {
            return outCols() + pad;
        }

        /** The gathered A of all-gather: every rank's rows stacked. */
        HostMatrix gathered() {
            return HostMatrix.stack(a);
        }

        /** Every element of this rank's output, with its bound. */
        Expected expected() {
            int rows = outRows();
            int cols = outCols();
            double[] values = new double[rows * cols];
            double[] bounds = new double[values.length];
            switch (op) {
                case ALL_SCATTER -> {
                    for (int p = 0; p < world; p++) {
                        Reference e = GemmReference.products(a[0], b[p], layout, 0, m, bias[p]);
                        for (int i = 0; i < m; i++) {
                            for (int j = 0; j < n; j++) {
                                int at = i * cols + p * n + j;
                                values[at] = e.sum(i, j);
                                bounds[at] = FusedReference.plainBound(dtype, k, values[at], e.absSum(i, j));
                            }
                        }
                    }
                }
                case ALL_GATHER -> {
                    Reference e = GemmReference.products(gathered(), b[rank], layout, 0, m, bias[rank]);
                    for (int i = 0; i < values.length; i++) {
                        values[i] = e.sum()[i];
                        bounds[i] = FusedReference.plainBound(dtype, k, values[i], e.absSum()[i]);
                    }
                }
                case ALL_REDUCE, REDUCE_SCATTER -> {
                    int row0 = op == FusedOp.REDUCE_SCATTER ? rank * rows : 0;
                    Reference[] parts = new Reference[world];
                    for (int p = 0; p < world; p++) {
                        parts[p] = GemmReference.products(a[p], b[p], layout, row0, rows, p == 0 ? bias[0] : null);
                    }
                    double[] partials = new double[world];
                    double[] sums = new double[world];
                    for (int i = 0; i < values.length; i++) {
                        for (int p = 0; p < world; p++) {
                            partials[p] = parts[p].sum()[i];
                            sums[p] = parts[p].absSum()[i];
                            values[i] += partials[p];
                        }
                        bounds[i] = FusedReference.reducedBound(dtype, k, partials, sums);
                    }
                }
            }
            return new Expected(rows, cols, values, bounds);
        }

        /** Null, or what is wrong with this rank's output (and all-gather's gathered A). */
        String check(String what) {
            String out = FusedReference.check(what, download(tc), dtype, ldc(), outRows(), expected());
            if (out == null && op == FusedOp.ALL_GATHER) {
                ByteBuffer got = download(ta);
                ByteBuffer want = gathered().bytes();
                int mismatch = got.mismatch(want);
                if (mismatch >= 0) {
                    long element = mismatch / 2;
                    out = what + ": the gathered A differs from every rank's rows at (" + element / k + ", " + element % k + ")"
                            + (GemmReference.isPoison(got, dtype, element) ? ": poison (never pushed)" : "");
                }
            }
            return out;
        }

        String describe() {
            return op.id() + " " + m + " x " + n + " x " + k + " " + dtype + " " + layout.kernelSuffix() + (withBias ? " + bias" : "")
                    + (pad > 0 ? ", ldc + " + pad : "");
        }

        @Override
        public void close() {
            for (int i = owned.size() - 1; i >= 0; i--) {
                owned.get(i).closeIfLive();
            }
            owned.clear();
        }
    }

    /** Creates the operation of {@code op} (collective). */
    private FusedGemm create(FusedOp op, int m, int n, int k, FusedConfig config) {
        return switch (op) {
            case ALL_SCATTER -> GemmAllScatter.create(iris, m, n, k, config);
            case ALL_REDUCE -> GemmAllReduce.create(iris, m, n, k, config);
            case REDUCE_SCATTER -> GemmReduceScatter.create(iris, m, n, k, config);
            case ALL_GATHER -> AllGatherGemm.create(iris, m, n, k, config);
        };
    }

    /** A shape in kernel terms plus how to run it. */
    private record Case(int m, int n, int k, DType dtype, GemmLayout layout, boolean bias, int pad) {}

    /** Small shapes per operation; M for the row-split operations scales with the world size. */
    private List<Case> smallCases(FusedOp op) {
        int w = world;
        return switch (op) {
            case ALL_SCATTER -> List.of(
                    new Case(200, 136, 72, DType.BF16, GemmLayout.NK, false, 0),
                    new Case(200, 136, 72, DType.BF16, GemmLayout.KN, true, PAD),
                    new Case(129, 264, 520, DType.F16, GemmLayout.NK, true, 0));
            case ALL_REDUCE -> List.of(
                    new Case(300, 264, 520, DType.BF16, GemmLayout.NK, true, 0),
                    new Case(300, 264, 520, DType.BF16, GemmLayout.KN, false, PAD),
                    new Case(129, 136, 72, DType.F16, GemmLayout.NK, true, 0));
            case REDUCE_SCATTER -> List.of(
                    new Case(256 * w, 264, 72, DType.BF16, GemmLayout.NK, true, 0),
                    new Case(128 * w, 136, 520, DType.BF16, GemmLayout.KN, false, PAD),
                    new Case(384 * w, 264, 520, DType.F16, GemmLayout.NK, true, 0));
            case ALL_GATHER -> List.of(
                    new Case(256 * w, 136, 520, DType.BF16, GemmLayout.NK, true, 0),
                    new Case(128 * w, 264, 72, DType.BF16, GemmLayout.KN, false, PAD),
                    new Case(384 * w, 136, 520, DType.F16, GemmLayout.NK, false, 0),
                    // K = 264: with split-K the second half is one k-block, in a piece of 8 columns.
                    new Case(128 * w, 264, 264, DType.BF16, GemmLayout.KN, true, PAD));
        };
    }

    // =============================================================================================
    // small shapes against the CPU reference
    // =============================================================================================

    /**
     * Every small case of {@code op} with every variant, tile width and split-K, each on a fresh
     * instance, against the CPU reference; for all-gather also split-K on two blocks, so that the
     * two halves of each tile run round after round.
     */
    private void small(FusedOp op) {
        Failures f = new Failures();
        int index = 0;
        for (Case c : smallCases(op)) {
            for (FusedVariant v : op.variants(mainloop)) {
                for (int tileN : op.tileWidths(mainloop)) {
                    for (int split : op.splitsK(mainloop) && c.k() >= FusedOp.MIN_SPLIT_K ? new int[] {1, 2} : new int[] {1}) {
                        FusedConfig config = FusedConfig.defaults().withVariant(v).withTileN(tileN).withSplitK(split);
                        smallRun(f, op, c, config, op.id() + "_small_" + index++);
                    }
                }
            }
        }
        if (op.splitsK(mainloop)) {
            Case c = smallCases(op).get(0);
            smallRun(f, op, c, FusedConfig.defaults().withSplitK(2).withMaxBlocks(3), op.id() + "_small_" + index++);
        }
        if (op.splitsRows()) {
            // Rows that are not whole tiles on every rank, as decode's few tokens: only UNFUSED takes
            // them, and AUTO must choose it (creation refuses the kernels' variants). All-gather's
            // UNFUSED writes C of any leading dimension; reduce-scatter's needs ldc = N.
            int pad = op == FusedOp.ALL_GATHER ? PAD : 0;
            for (Case c : List.of(new Case(8 * world, 264, 520, DType.BF16, GemmLayout.NK, true, 0),
                                  new Case(world, 136, 72, DType.F16, GemmLayout.KN, false, pad),
                                  new Case(129 * world, 136, 520, DType.BF16, GemmLayout.KN, true, pad))) {
                smallRun(f, op, c, FusedConfig.defaults(), op.id() + "_small_" + index++);
            }
        }
        f.throwIfAny();
    }

    private void smallRun(Failures f, FusedOp op, Case c, FusedConfig config, String tag) {
        try (FusedGemm g = create(op, c.m(), c.n(), c.k(), config);
             Problem p = new Problem(op, c.m(), c.n(), c.k(), c.dtype(), c.layout(), c.bias(), c.pad(), tag)) {
            if (config.variant() == FusedVariant.AUTO && op.onlyUnfusedTakesRows(c.m(), world)) {
                f.check(g.variant() == FusedVariant.UNFUSED, () -> p.describe() + ": AUTO chose " + g.variant() + ", expected UNFUSED");
            }
            iris.hostBarrier();  // every rank poisoned its outputs before any peer stores into them
            p.run(g, stream, false);
            iris.synchronize();
            f.add(p.check(p.describe() + " " + g));
        }
    }

    /** For the soak: these scenarios' problems and checks without the cuBLAS / NCCL baselines. */
    public static FusedScenarios withoutBaselines(Iris iris, long runSeed) {
        return new FusedScenarios(iris, null, runSeed);
    }

    /**
     * One random small problem (operation, variant, dtype, layout, bias, padding and shape drawn
     * from {@code shared}, which must draw the same on every rank) on a fresh instance, against the
     * CPU reference. Collective. Returns null when right, else what differed.
     */
    public String randomSmall(Random shared, String tag) {
        FusedOp op = FusedOp.values()[shared.nextInt(FusedOp.values().length)];
        List<FusedVariant> variants = new ArrayList<>(op.variants(mainloop));  // an EnumSet: the same order on every rank
        FusedVariant v = variants.get(shared.nextInt(variants.size()));
        int m = op.splitsRows() ? 128 * world * (1 + shared.nextInt(3)) : 1 + shared.nextInt(384);
        int n = 8 * (1 + shared.nextInt(40));
        int k = 8 * (1 + shared.nextInt(64));
        DType dtype = shared.nextBoolean() ? DType.BF16 : DType.F16;
        GemmLayout layout = shared.nextBoolean() ? GemmLayout.NK : GemmLayout.KN;
        boolean bias = shared.nextBoolean();
        int pad = shared.nextBoolean() ? PAD : 0;
        try (FusedGemm g = create(op, m, n, k, FusedConfig.defaults().withVariant(v));
             Problem p = new Problem(op, m, n, k, dtype, layout, bias, pad, tag)) {
            iris.hostBarrier();  // every rank poisoned its outputs before any peer stores into them
            p.run(g, stream, false);
            iris.synchronize();
            String failure = p.check(p.describe() + " " + v.kernelName());
            iris.hostBarrier();  // no rank frees its workspace while a peer may still read it
            return failure;
        }
    }

    // =============================================================================================
    // the layouts a tensor-parallel layer's backward pass uses
    // =============================================================================================

    /** A training-like shard: 256 tokens per rank, hidden 512, 384 columns of the FFN per rank. */
    private static final int BACKWARD_TOKENS_PER_RANK = 256;
    private static final int BACKWARD_HIDDEN = 512;
    private static final int BACKWARD_FFN_PER_RANK = 384;

    /**
     * A column-parallel layer ({@code H_r = X W_r^T}, X gathered over the sequence, W_r this rank's
     * [F_local, hidden] rows of the weight) backward, per variant: {@code dX = reduce-scatter(dH_r
     * W_r)}, GEMM + reduce-scatter with W_r as stored, K x N ({@link GemmLayout#KN}); then on the
     * same stream the weight gradient {@code dW_r += dH_r^T X} with the plain GEMM ({@link
     * #gradientGemm}) in {@link GemmLayouts#KM_KN}, F32, alpha 1 and beta 1 onto a random F32
     * gradient (accumulation).
     */
    private void columnParallelBackward() {
        Failures f = new Failures();
        int t = BACKWARD_TOKENS_PER_RANK * world;
        for (FusedVariant v : FusedOp.REDUCE_SCATTER.variants(mainloop)) {
            String tag = "column_parallel_backward_" + v;
            HostMatrix x = HostMatrix.random(seed(tag, 4), DType.BF16, t, BACKWARD_HIDDEN);  // the gathered input
            HostMatrix dw0 = HostMatrix.random(seed(tag, 5, rank), DType.F32, BACKWARD_FFN_PER_RANK, BACKWARD_HIDDEN);
            try (Gemm gemm = gradientGemm();
                 FusedGemm g = create(FusedOp.REDUCE_SCATTER, t, BACKWARD_HIDDEN, BACKWARD_FFN_PER_RANK,
                         FusedConfig.defaults().withVariant(v));
                 // A: dH_r [T, F_local]; B: W_r [F_local, hidden], K x N; C: dX_r [T / world, hidden]
                 Problem p = new Problem(FusedOp.REDUCE_SCATTER, t, BACKWARD_HIDDEN, BACKWARD_FFN_PER_RANK, DType.BF16,
                         GemmLayout.KN, false, 0, tag);
                 SymTensor tx = heap.empty(DType.BF16, t, BACKWARD_HIDDEN);
                 SymTensor dw = heap.empty(DType.F32, BACKWARD_FFN_PER_RANK, BACKWARD_HIDDEN)) {
                tx.copyFrom(x.bytes());
                dw.copyFrom(dw0.bytes());
                iris.hostBarrier();  // every rank poisoned dX before any peer stores into it
                p.run(g, stream, false);
                if (gemm != null) {
                    gemm.matmul(p.ta, tx, GemmLayouts.KM_KN, dw, 1f, 1f, stream);
                }
                iris.synchronize();
                f.add(p.check("column-parallel backward, dX = reduce-scatter(dH W): " + p.describe() + " " + g));
                if (gemm != null) {
                    f.add(weightGradientCheck("column-parallel backward, dW += dH^T X (" + v + ")", dw, p.a[rank], x, dw0));
                }
                iris.hostBarrier();  // no rank frees its workspace while a peer may still write into it
            }
        }
        f.throwIfAny();
    }

    /**
     * A row-parallel layer ({@code Y = reduce-scatter(A_r W_r^T)}, W_r this rank's [hidden, F_local]
     * columns of the weight) backward: {@code dA_r = gather(dY) W_r}, all-gather + GEMM with W_r as
     * stored, K x N ({@link GemmLayout#KN}); then on the same stream the weight gradient {@code dW_r
     * += gather(dY)^T A_r}, reading the gathered dY that the call filled, with the plain GEMM in
     * {@link GemmLayouts#KM_KN}, F32, alpha 1 and beta 1 onto a random F32 gradient.
     */
    private void rowParallelBackward() {
        Failures f = new Failures();
        int t = BACKWARD_TOKENS_PER_RANK * world;
        for (FusedVariant v : FusedOp.ALL_GATHER.variants(mainloop)) {
            String tag = "row_parallel_backward_" + v;
            HostMatrix act = HostMatrix.random(seed(tag, 4, rank), DType.BF16, t, BACKWARD_FFN_PER_RANK);  // the layer's input A_r
            HostMatrix dw0 = HostMatrix.random(seed(tag, 5, rank), DType.F32, BACKWARD_HIDDEN, BACKWARD_FFN_PER_RANK);
            try (Gemm gemm = gradientGemm();
                 FusedGemm g = create(FusedOp.ALL_GATHER, t, BACKWARD_FFN_PER_RANK, BACKWARD_HIDDEN,
                         FusedConfig.defaults().withVariant(v));
                 // A: dY gathered [T, hidden]; B: W_r [hidden, F_local], K x N; C: dA_r [T, F_local]
                 Problem p = new Problem(FusedOp.ALL_GATHER, t, BACKWARD_FFN_PER_RANK, BACKWARD_HIDDEN, DType.BF16,
                         GemmLayout.KN, false, 0, tag);
                 SymTensor ta = heap.empty(DType.BF16, t, BACKWARD_FFN_PER_RANK);
                 SymTensor dw = heap.empty(DType.F32, BACKWARD_HIDDEN, BACKWARD_FFN_PER_RANK)) {
                ta.copyFrom(act.bytes());
                dw.copyFrom(dw0.bytes());
                iris.hostBarrier();  // every rank poisoned its gathered dY before any peer pushes into it
                p.run(g, stream, false);
                if (gemm != null) {
                    gemm.matmul(p.ta, ta, GemmLayouts.KM_KN, dw, 1f, 1f, stream);
                }
                iris.synchronize();
                f.add(p.check("row-parallel backward, dA = gather(dY) W: " + p.describe() + " " + g));
                if (gemm != null) {
                    f.add(weightGradientCheck("row-parallel backward, dW += gather(dY)^T A (" + v + ")", dw, p.gathered(), act, dw0));
                }
                iris.hostBarrier();  // no rank frees its gathered dY while a peer may still push into it
            }
        }
        f.throwIfAny();
    }

    /**
     * The GEMM of the backward scenarios' weight gradients (A stored K x M, beta 1), which only the
     * Hopper mainloop takes: asked for by name, so that {@value GemmMainloop#VARIABLE}{@code
     * =portable}, which moves the fused operations under test onto the portable kernels, leaves it
     * alone. Null on a GPU without it: the scenarios then check the fused operation alone.
     */
    private Gemm gradientGemm() {
        DeviceProperties d = iris.deviceProperties();
        return d.major() == 9 && d.minor() == 0 ? Gemm.create(Gemm.Options.defaults().withMainloop(GemmMainloop.HOPPER)) : null;
    }

    /**
     * Null, or what is wrong with a weight gradient {@code dw = dy^T x + dw0} (F32, dy [T, out] read
     * as A stored K x M, x [T, in] as B stored K x N), every element within {@link
     * GemmErrorBound#scaled}'s bound.
     */
    private static String weightGradientCheck(String what, SymTensor dw, HostMatrix dy, HostMatrix x, HostMatrix dw0) {
        Reference ref = GemmReference.full(dy, GemmALayout.KM, x, GemmLayout.KN);
        return GemmReference.checkElements(what, download(dw), DType.F32, dw0.cols(), dw0.rows(),
                GemmReference.scaledWindow(ref, 1f, 1f, dw0, null, DType.F32));
    }

    // =============================================================================================
    // repeated calls: epochs above 1, buffers reused while peers may still be behind
    // =============================================================================================

    /**
     * Per operation and variant, three calls on one instance enqueued back to back with no host
     * synchronization, each on its own inputs and into its own output; for all-gather the third
     * call reuses the first call's gathered A, whose local rows are overwritten on the stream
     * (a device-to-device copy) right after the first call. Every output is checked afterwards.
     */
    /**
     * All-scatter's peers store into this rank's C; a call must not do so while this rank still
     * reads the previous call's C. Each rank runs call N, copies its C into D (rank 1 enqueues the
     * copy 5 ms late, as after a GC pause), then runs call N + 1. Every product is a constant
     * (A ones, B rank r's constant per call), so D must hold call N's constant in every rank's
     * column block; a peer's call N + 1 storing ahead of the copy shows as call N + 1's constant.
     */
    private void allScatterEntryHandshake() throws Exception {
        Failures f = new Failures();
        int m = 256;
        int nLocal = 128;
        int k = 64;
        long cols = (long) nLocal * world;
        try (GemmAllScatter g = GemmAllScatter.create(iris, m, nLocal, k);
             SymTensor a = heap.full(1, DType.BF16, m, k);
             SymTensor callN = heap.full(1 + rank, DType.BF16, nLocal, k);
             SymTensor callNext = heap.full(1 + world + rank, DType.BF16, nLocal, k);
             SymTensor c = heap.empty(DType.BF16, m, cols);
             SymTensor d = heap.empty(DType.BF16, m, cols)) {
            for (int round = 0; round < 3; round++) {
                poison(c);
                poison(d);
                iris.hostBarrier();
                g.run(a, callN, GemmLayout.NK, null, c, stream);
                if (rank == 1) {
                    Thread.sleep(5);
                }
                Memcpy.deviceToDevice(d.deviceAddress(), c.deviceAddress(), c.byteSize(), stream);
                g.run(a, callNext, GemmLayout.NK, null, c, stream);
                iris.synchronize();
                float[] got = d.toFloatArray();
                int wrong = 0;
                String first = null;
                for (int i = 0; i < got.length; i++) {
                    int owner = (int) (i % cols / nLocal);
                    float expected = k * (1 + owner);
                    if (got[i] != expected && wrong++ == 0) {
                        first = "D[" + i / cols + ", " + i % cols + "] = " + got[i] + ", expected rank " + owner + "'s call-N value "
                                + expected + (got[i] == k * (1 + world + owner) ? " (call N + 1's value: stored before the copy)" : "");
                    }
                }
                final int r = round;
                final int w = wrong;
                final String at = first;
                f.check(wrong == 0, () -> "round " + r + ": " + w + " of " + got.length + " elements of the copy wrong; first " + at);
            }
            iris.hostBarrier();
        }
        f.throwIfAny();
    }

    private void backToBack() {
        Failures f = new Failures();
        for (FusedOp op : FusedOp.values()) {
            for (FusedVariant v : op.variants(mainloop)) {
                int m = op.splitsRows() ? 256 * world : 384;
                int n = 264;
                int k = 136;
                String tag = "b2b_" + op.id() + "_" + v;
                try (FusedGemm g = create(op, m, n, k, FusedConfig.defaults().withVariant(v));
                     Problem p1 = new Problem(op, m, n, k, DType.BF16, GemmLayout.NK, true, 0, tag + "_1");
                     Problem p2 = new Problem(op, m, n, k, DType.BF16, GemmLayout.NK, false, 0, tag + "_2");
                     Problem p3 = new Problem(op, m, n, k, DType.BF16, GemmLayout.NK, true, 0, tag + "_3",
                             op == FusedOp.ALL_GATHER ? p1.ta : null);
                     SymTensor staging = heap.empty(DType.BF16, Math.max(1, m / world), k)) {
                    if (op == FusedOp.ALL_GATHER) {
                        staging.copyFrom(p3.a[rank].bytes());
                        p1.fill(true);  // p3 shares p1's gathered A: p1's rows go back in; p3's are copied after call 1
                    }
                    iris.hostBarrier();
                    p1.run(g, stream, false);
                    if (op == FusedOp.ALL_GATHER) {
                        // p3's local rows replace p1's in the shared gathered A, ordered after call 1 on the stream.
                        long rows = m / world;
                        Memcpy.deviceToDevice(p1.ta.deviceAddress() + rank * rows * k * 2, staging.deviceAddress(), rows * k * 2, stream);
                    }
                    p2.run(g, stream, false);
                    p3.run(g, stream, false);
                    iris.synchronize();
                    String what = p1.describe() + " " + v.kernelName() + ", call ";
                    // p3 took over p1's gathered A in the all-gather case: there only p1's output is p1's to check.
                    f.add(op == FusedOp.ALL_GATHER ? checkOutputOnly(p1, what + "1 of 3") : p1.check(what + "1 of 3"));
                    f.add(p2.check(what + "2 of 3"));
                    f.add(p3.check(what + "3 of 3 (epoch " + g.calls() + ")"));
                    f.check(g.calls() == 3, () -> op + ": calls() = " + g.calls() + ", expected 3");
                }
            }
        }
        f.throwIfAny();
    }

    /** The output alone (p1 of the all-gather case shares its gathered A with a later call). */
    private static String checkOutputOnly(Problem p, String what) {
        return FusedReference.check(what, download(p.tc), p.dtype, p.ldc(), p.outRows(), p.expected());
    }

    // =============================================================================================
    // CUDA graphs
    // =============================================================================================

    /**
     * Per operation and variant: {@code runReplayable} captured into a CUDA graph on another
     * stream, then replayed three times with new inputs in the same tensors (poisoned outputs each
     * time), with an eager {@code run} of the same instance into other tensors between the second
     * and the third replay; every replay and the eager call must be right.
     */
    private void graphReplay() throws Exception {
        Failures f = new Failures();
        for (FusedOp op : FusedOp.values()) {
            for (FusedVariant v : op.variants(mainloop)) {
                int m = op.splitsRows() ? 128 * world * 2 : 300;
                int n = 136;
                int k = 264;
                String tag = "graph_" + op.id() + "_" + v;
                try (Stream s = Stream.create(); FusedGemm g = create(op, m, n, k, FusedConfig.defaults().withVariant(v));
                     Problem p = new Problem(op, m, n, k, DType.BF16, GemmLayout.NK, true, 0, tag + "_capture");
                     Problem q = new Problem(op, m, n, k, DType.BF16, GemmLayout.KN, false, 0, tag + "_eager")) {
                    CudaGraph graph;
                    s.beginCapture();
                    try {
                        p.run(g, s, true);
                    } finally {
                        graph = s.endCapture();
                    }
                    try (CudaGraph replay = graph) {
                        for (int rep = 0; rep < 3; rep++) {
                            p.refill(tag + "_replay" + rep);
                            iris.hostBarrier();
                            replay.launch(s);
                            s.synchronize();
                            iris.checkDeviceStatus();
                            f.add(p.check(p.describe() + " " + v.kernelName() + ", graph replay " + rep));
                            if (rep == 1) {
                                q.fill(true);
                                iris.hostBarrier();
                                q.run(g, stream, false);
                                iris.synchronize();
                                f.add(q.check(q.describe() + " " + v.kernelName() + ", eager call between replays"));
                            }
                        }
                    }
                    s.synchronize();
                }
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // tracing
    // =============================================================================================

    /**
     * Per operation and variant, a traced instance: the output is still right; the trace has a
     * mainloop and an epilogue record for both halves of every tile, copy records where spare warps
     * move data; rank 0 writes every rank's trace into one Chrome trace whose processes are the
     * ranks. An untraced instance refuses readTrace.
     */
    private void tracing() throws Exception {
        Failures f = new Failures();
        if (mainloop == GemmMainloop.PORTABLE) {
            for (FusedOp op : FusedOp.values()) {
                int m = op.splitsRows() ? 128 * world * 2 : 384;
                expect(f, () -> create(op, m, 264, 520, FusedConfig.defaults().withTracing(true)),
                        "rank " + rank + ": " + op.className() + ": config tracing: the portable mainloop's kernels record no timeline");
            }
            f.throwIfAny();
            return;
        }
        Path dir = Files.createTempDirectory("fused-traces");
        for (FusedOp op : FusedOp.values()) {
            for (FusedVariant v : op.variants(mainloop)) {
                int m = op.splitsRows() ? 128 * world * 2 : 384;
                if (v == FusedVariant.UNFUSED) {
                    expect(f, () -> create(op, m, 264, 520, FusedConfig.defaults().withVariant(v).withTracing(true)),
                            "rank " + rank + ": " + op.className() + ": config tracing: UNFUSED runs no fused kernel");
                    try (FusedGemm auto = create(op, m, 264, 520, FusedConfig.defaults().withTracing(true))) {
                        f.check(auto.variant() == FusedVariant.SPARE_WARPS,
                                () -> "AUTO, traced, with few tiles: " + auto.variant() + ", expected the kernel SPARE_WARPS");
                    }
                    continue;
                }
                String tag = "trace_" + op.id() + "_" + v;
                try (FusedGemm g = create(op, m, 264, 520, FusedConfig.defaults().withVariant(v).withTracing(true));
                     Problem p = new Problem(op, m, 264, 520, DType.BF16, GemmLayout.NK, false, 0, tag)) {
                    iris.hostBarrier();
                    p.run(g, stream, false);
                    TileTrace t = g.readTrace(stream);
                    String what = p.describe() + " " + v.kernelName() + " traced";
                    f.add(p.check(what));
                    boolean copies = world > 1 && (v == FusedVariant.SPARE_WARPS);
                    String problem = t.verify(copies);
                    f.check(problem == null, () -> what + ": " + problem);
                    byte[][] all = iris.allGather(t.toBytes());
                    if (rank == 0) {
                        List<TileTrace> ranks = new ArrayList<>();
                        for (byte[] one : all) ranks.add(TileTrace.fromBytes(one));
                        Path file = dir.resolve(op.id() + "-" + v.kernelName() + ".json");
                        TileTrace.writeChromeJson(ranks, file);
                        String json = Files.readString(file, StandardCharsets.UTF_8);
                        for (int r = 0; r < world; r++) {
                            int rr = r;
                            f.check(json.contains("\"args\":{\"name\":\"rank " + r + "\"}"), () -> what + ": no process for rank " + rr);
                        }
                        System.out.println("fused: " + t + " -> " + file);
                    }
                }
            }
        }
        try (FusedGemm plain = create(FusedOp.ALL_REDUCE, 256, 256, 64, FusedConfig.defaults())) {
            try {
                plain.readTrace(stream);
                f.fail("readTrace without tracing did not throw");
            } catch (IllegalStateException e) {
                f.check(e.getMessage().contains("tracing is off"), () -> "readTrace without tracing: " + e.getMessage());
            }
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // the large shape against cuBLAS + NCCL
    // =============================================================================================

    /**
     * 2048 x 2048 x 2048 (global M x N x K) for every operation and variant, against cuBLAS then
     * NCCL on the same device inputs (see the class comment for the checks).
     */
    private void large() {
        Failures f = new Failures();
        if (!baselines.available()) {
            if (baselinesRequired) {
                f.fail("cuBLAS / NCCL unavailable (" + baselines.reason() + "); set IRIS_TEST_NCCL=off to skip this comparison");
            }
            f.throwIfAny();
            return;
        }
        // About 2048, split into whole 128-row tiles (reduce-scatter) and 64-wide pieces on every rank.
        int size = (2048 + 128 * world - 1) / (128 * world) * (128 * world);
        for (FusedOp op : FusedOp.values()) {
            int m = size;
            int n = op == FusedOp.ALL_SCATTER || op == FusedOp.ALL_GATHER ? size / world : size;
            int k = op == FusedOp.ALL_REDUCE || op == FusedOp.REDUCE_SCATTER ? size / world : size;
            for (FusedVariant v : op.variants(mainloop)) {
                for (int tileN : op.tileWidths(mainloop)) {
                    boolean bias = op == FusedOp.ALL_REDUCE;
                    String tag = "large_" + op.id() + "_" + v + "_" + tileN;
                    try (FusedGemm g = create(op, m, n, k, FusedConfig.defaults().withVariant(v).withTileN(tileN));
                         Problem p = new Problem(op, m, n, k, DType.BF16, GemmLayout.NK, bias, 0, tag)) {
                        iris.hostBarrier();
                        p.run(g, stream, false);
                        iris.synchronize();
                        largeCheck(f, p, v, tileN);
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /** The fused output of {@code p} against cuBLAS + NCCL and against sampled exact elements. */
    private void largeCheck(Failures f, Problem p, FusedVariant v, int tileN) {
        String what = p.describe() + " " + v.kernelName() + " 128 x " + tileN;
        DType t = p.dtype;
        int m = p.m;
        int n = p.n;
        int k = p.k;
        ByteBuffer got = download(p.tc);
        List<SymTensor> scratch = new ArrayList<>();
        try {
            SymTensor absA = track(scratch, heap.empty(t, m, k));
            SymTensor absB = track(scratch, heap.empty(t, p.layout.bRows(n, k), p.layout.bCols(n, k)));
            absB.copyFrom(p.b[rank].abs().bytes());
            ByteBuffer theirs;
            ByteBuffer sums;
            long kTotal = k;
            switch (p.op) {
                case ALL_SCATTER -> {
                    absA.copyFrom(p.a[0].abs().bytes());
                    SymTensor local = track(scratch, heap.empty(t, m, n));
                    SymTensor all = track(scratch, heap.empty(t, world, m, n));
                    SymTensor s = track(scratch, heap.empty(DType.F32, m, n));
                    SymTensor sAll = track(scratch, heap.empty(DType.F32, world, m, n));
                    baselines.gemm(p.layout, t, t, m, n, k, p.ta.deviceAddress(), p.tb.deviceAddress(), local.deviceAddress(), false);
                    baselines.allGather(local.deviceAddress(), all.deviceAddress(), (long) m * n, t, stream);
                    baselines.gemm(p.layout, t, DType.F32, m, n, k, absA.deviceAddress(), absB.deviceAddress(), s.deviceAddress(), false);
                    baselines.allGather(s.deviceAddress(), sAll.deviceAddress(), (long) m * n, DType.F32, stream);
                    iris.synchronize();
                    theirs = download(all);
                    sums = download(sAll);
                }
                case ALL_GATHER -> {
                    int rows = m / world;
                    SymTensor absMine = track(scratch, heap.empty(t, rows, k));
                    absMine.copyFrom(p.a[rank].abs().bytes());
                    SymTensor mine = track(scratch, heap.empty(t, rows, k));
                    mine.copyFrom(p.a[rank].bytes());
                    SymTensor gatheredA = track(scratch, heap.empty(t, m, k));
                    SymTensor out = track(scratch, heap.empty(t, m, n));
                    SymTensor s = track(scratch, heap.empty(DType.F32, m, n));
                    baselines.allGather(mine.deviceAddress(), gatheredA.deviceAddress(), (long) rows * k, t, stream);
                    baselines.gemm(p.layout, t, t, m, n, k, gatheredA.deviceAddress(), p.tb.deviceAddress(), out.deviceAddress(), false);
                    baselines.allGather(absMine.deviceAddress(), absA.deviceAddress(), (long) rows * k, t, stream);
                    baselines.gemm(p.layout, t, DType.F32, m, n, k, absA.deviceAddress(), absB.deviceAddress(), s.deviceAddress(), false);
                    iris.synchronize();
                    theirs = download(out);
                    sums = download(s);
                }
                default -> {
                    absA.copyFrom(p.a[rank].abs().bytes());
                    SymTensor partial = track(scratch, heap.empty(t, m, n));
                    if (rank == 0 && p.withBias) {
                        partial.copyFrom(biasRows(p, m));  // cuBLAS adds it: C = A B + 1 x C
                    }
                    int rows = p.outRows();
                    SymTensor out = track(scratch, heap.empty(t, rows, n));
                    SymTensor s = track(scratch, heap.empty(DType.F32, m, n));
                    SymTensor sTotal = track(scratch, heap.empty(DType.F32, m, n));
                    baselines.gemm(p.layout, t, t, m, n, k, p.ta.deviceAddress(), p.tb.deviceAddress(), partial.deviceAddress(),
                            rank == 0 && p.withBias);
                    if (p.op == FusedOp.ALL_REDUCE) {
                        baselines.allReduce(partial.deviceAddress(), out.deviceAddress(), (long) m * n, t, stream);
                    } else {
                        baselines.reduceScatter(partial.deviceAddress(), out.deviceAddress(), (long) rows * n, t, stream);
                    }
                    baselines.gemm(p.layout, t, DType.F32, m, n, k, absA.deviceAddress(), absB.deviceAddress(), s.deviceAddress(), false);
                    baselines.allReduce(s.deviceAddress(), sTotal.deviceAddress(), (long) m * n, DType.F32, stream);
                    iris.synchronize();
                    theirs = download(out);
                    sums = download(sTotal);
                }
            }
            compareWithBaseline(f, what, p, got, theirs, sums, kTotal);
        } finally {
            iris.synchronize();
            for (int i = scratch.size() - 1; i >= 0; i--) scratch.get(i).close();
        }
        sampled(f, what, p, got);
        if (p.op == FusedOp.ALL_SCATTER || p.op == FusedOp.ALL_REDUCE) {
            // Every rank holds the same C: compare checksums.
            CRC32 crc = new CRC32();
            crc.update(got.duplicate());
            byte[][] all = iris.allGather(ByteBuffer.allocate(8).putLong(crc.getValue()).array());
            for (int r = 0; r < world; r++) {
                long theirsCrc = ByteBuffer.wrap(all[r]).getLong();
                int rr = r;
                f.check(theirsCrc == crc.getValue(), () -> what + ": C on rank " + rr + " differs from this rank's (CRC32)");
            }
        }
    }

    /**
     * Element by element within both implementations' bounds. Plain elements: {@link
     * GemmErrorBound#pairBound}. Reduced elements: the same form with the reduced bound's terms,
     * S the NCCL sum of every rank's F32 S (plus NCCL's own roundings on more than two ranks).
     */
    private void compareWithBaseline(Failures f, String what, Problem p, ByteBuffer got, ByteBuffer theirs, ByteBuffer sums,
                                     long k) {
        DType t = p.dtype;
        int rows = p.outRows();
        int cols = p.outCols();
        int ldc = p.ldc();
        double u = t.unitRoundoff();
        double eta = t.halfSmallestSubnormal();
        int wrong = 0;
        String first = null;
        double worst = 0;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                double mine = GemmReference.get(got, t, (long) i * ldc + j);
                double other;
                double sF32;
                if (p.op == FusedOp.ALL_SCATTER) {
                    int owner = j / p.n;
                    long at = ((long) owner * p.m + i) * p.n + (j % p.n);
                    other = GemmReference.get(theirs, t, at);
                    sF32 = GemmReference.get(sums, DType.F32, at);
                } else if (p.op == FusedOp.REDUCE_SCATTER) {
                    other = GemmReference.get(theirs, t, (long) i * cols + j);
                    sF32 = GemmReference.get(sums, DType.F32, (long) (rank * rows + i) * cols + j);
                } else {
                    other = GemmReference.get(theirs, t, (long) i * cols + j);
                    sF32 = GemmReference.get(sums, DType.F32, (long) i * cols + j);
                }
                double bound;
                if (p.op == FusedOp.ALL_SCATTER || p.op == FusedOp.ALL_GATHER) {
                    bound = GemmErrorBound.pairBound(t, k, other, GemmErrorBound.absSumUpper(k, sF32), 0);
                } else {
                    double beta = p.withBias ? Math.abs(p.bias[0][j]) : 0;
                    double s = GemmErrorBound.absSumUpper(k, sF32) * (1 + world * 0x1p-23) + beta;
                    double e = (u + (1 + u) * k * GemmErrorBound.ACCUMULATION_UNIT + k * 0x1p-50) * s + world * eta;
                    double adds = (world - 1) * 0x1p-24 * (s + e);
                    double ncclRounding = Math.max(0, world - 2) * u * (s + e);
                    double t1 = (1 + u) * (e + adds + ncclRounding) + eta;
                    bound = 2 * (u * (Math.abs(other) + t1) / (1 - u) + t1);
                }
                double diff = Math.abs(mine - other);
                if (!(diff <= bound)) {
                    if (first == null) {
                        first = String.format(Locale.ROOT, "(%d, %d) = %s, baseline %s, bound %.3g", i, j,
                                GemmReference.isPoison(got, t, (long) i * ldc + j) ? "poison (never written)" : String.valueOf(mine), other,
                                bound);
                    }
                    wrong++;
                } else if (bound > 0) {
                    worst = Math.max(worst, diff / bound);
                }
            }
        }
        if (wrong > 0) {
            f.fail(what + " vs cuBLAS + NCCL: " + wrong + " of " + (long) rows * cols + " elements beyond the pair bound; first " + first);
        }
        System.out.printf(Locale.ROOT, "fused: rank %d: %s: worst |fused - (cuBLAS + NCCL)| / pair bound %.3f%n", rank, what, worst);
    }

    /** Sampled elements (and the corners) against the exact reference within the element bound. */
    private void sampled(Failures f, String what, Problem p, ByteBuffer got) {
        Random r = new Random(seed(what, 9, rank));
        int rows = p.outRows();
        int cols = p.outCols();
        HostMatrix gathered = p.op == FusedOp.ALL_GATHER ? p.gathered() : null;
        int wrong = 0;
        String first = null;
        for (int s = 0; s < SAMPLES + 4; s++) {
            int i = s < 4 ? (s % 2 == 0 ? 0 : rows - 1) : r.nextInt(rows);
            int j = s < 4 ? (s < 2 ? 0 : cols - 1) : r.nextInt(cols);
            double exact;
            double bound;
            switch (p.op) {
                case ALL_SCATTER -> {
                    int owner = j / p.n;
                    double[] e = GemmReference.element(p.a[0], p.b[owner], p.layout, i, j % p.n, p.bias[owner]);
                    exact = e[0];
                    bound = FusedReference.plainBound(p.dtype, p.k, e[0], e[1]);
                }
                case ALL_GATHER -> {
                    double[] e = GemmReference.element(gathered, p.b[rank], p.layout, i, j, p.bias[rank]);
                    exact = e[0];
                    bound = FusedReference.plainBound(p.dtype, p.k, e[0], e[1]);
                }
                default -> {
                    int row = p.op == FusedOp.REDUCE_SCATTER ? rank * rows + i : i;
                    double[] partials = new double[world];
                    double[] sums = new double[world];
                    exact = 0;
                    for (int q = 0; q < world; q++) {
                        double[] e = GemmReference.element(p.a[q], p.b[q], p.layout, row, j, q == 0 ? p.bias[0] : null);
                        partials[q] = e[0];
                        sums[q] = e[1];
                        exact += e[0];
                    }
                    bound = FusedReference.reducedBound(p.dtype, p.k, partials, sums);
                }
            }
            double mine = GemmReference.get(got, p.dtype, (long) i * p.ldc() + j);
            if (!(Math.abs(mine - exact) <= bound)) {
                if (first == null) {
                    first = String.format(Locale.ROOT, "(%d, %d) = %s, exact %.9g ± %.3g", i, j, mine, exact, bound);
                }
                wrong++;
            }
        }
        if (wrong > 0) {
            f.fail(what + ": " + wrong + " of " + (SAMPLES + 4) + " sampled elements beyond the exact bound; first " + first);
        }
    }

    private static ByteBuffer biasRows(Problem p, int rows) {
        ByteBuffer one = new HostMatrix(p.dtype, 1, p.n, p.bias[0]).bytes();
        ByteBuffer b = ByteBuffer.allocateDirect(one.remaining() * rows).order(ByteOrder.nativeOrder());
        for (int r = 0; r < rows; r++) b.put(one.duplicate());
        return b.flip();
    }

    // =============================================================================================
    // beside other work: SMs held by a concurrent kernel
    // =============================================================================================

    /**
     * Split-K all-gather + GEMM (2 x 128 rows of A per rank, N 1024, K 2048: 16 units per rank's
     * rows, most blocks without a unit, every piece of A owned by one of those) while a kernel on
     * another stream holds every SM of this rank's GPU but {@code free} ({@link SmHog}, resident
     * before the call starts): the call's blocks then run a few at a time, in an order CUDA does not
     * promise. Checked against the CPU reference (the gathered A bit for bit), with no device
     * timeout, and the SMs still held when the call ended.
     *
     * <p>Why it failed before the blocks stopped depending on blocks of their own grid (on two
     * ranks, shared GPU or not):
     * <ul>
     * <li>One SM free: a tile's first half waited for its second half, the next block, which could
     *     start only once the first had left the SM. The call ended in a device timeout at wait site
     *     9005 ({@link FusedSites#SPLIT_PARTIAL}, split-K partial) after twice the device timeout;
     *     now the first to arrive stores and the second adds.</li>
     * <li>Four SMs free: the halves of a tile run side by side, but the tiles of peer rows wait for
     *     pieces of A that only the peer's blocks without a unit pushed, the last blocks to start,
     *     behind blocks that wait for this rank's pieces, which only this rank's blocks without a
     *     unit pushed: on every rank every free SM held a waiting block, and the call ended at wait
     *     site 9002 ({@link FusedSites#GATHERED_ROWS}, gathered rows) after the device timeout (or
     *     at 9005, had a tile's two halves been dispatched apart). Now the blocks that run push the
     *     pieces nobody has claimed.</li>
     * </ul>
     */
    private void allGatherBesideHeldSms(int free) {
        Failures f = new Failures();
        int m = 256 * world;
        int n = 1024;
        int k = 2048;
        int split = FusedOp.ALL_GATHER.splitsK(mainloop) ? 2 : 1;  // the portable kernels push A before they compute
        try (FusedGemm g = create(FusedOp.ALL_GATHER, m, n, k, FusedConfig.defaults().withSplitK(split));
             Problem p = new Problem(FusedOp.ALL_GATHER, m, n, k, DType.BF16, GemmLayout.NK, true, PAD, "held_sms_" + free)) {
            String what = p.describe() + " " + g + " with all SMs but " + free + " held";
            f.check(g.splitK() == split, () -> what + ": expected split-K " + split);
            iris.hostBarrier();  // every rank poisoned its outputs before any peer stores into them
            long start = System.nanoTime();
            try (SmHog hog = SmHog.hold(iris, free, heldAtMost())) {
                p.run(g, stream, false);
                iris.synchronize();
                hog.checkStillHolding();
            }
            System.out.printf(Locale.ROOT, "fused: rank %d: %s: %.1f ms%n", rank, what, (System.nanoTime() - start) / 1e6);
            f.add(p.check(what));
        }
        f.throwIfAny();
    }

    /** How long SmHog may hold the SMs: past a local wait's deadline (twice the device timeout). */
    private static Duration heldAtMost() {
        return Duration.ofMillis(3 * DEVICE_TIMEOUT_MS + 10_000);
    }

    // =============================================================================================
    // misuse
    // =============================================================================================

    /**
     * Argument checks: IllegalArgumentException naming the rank, the class, the argument and what
     * was expected, nothing launched, the instance still right afterwards; creation checks (shape,
     * variant, ranks that disagree, a rank that fails alone); use after close.
     */
    private void misuse() throws Exception {
        Failures f = new Failures();
        String ar = "rank " + rank + ": GemmAllReduce: ";
        try (GemmAllReduce g = GemmAllReduce.create(iris, 256, 256, 64);
             SymTensor a = heap.empty(DType.BF16, 256, 64); SymTensor b = heap.empty(DType.BF16, 256, 64);
             SymTensor c = heap.empty(DType.BF16, 256, 256); SymTensor a72 = heap.empty(DType.BF16, 256, 72);
             SymTensor c32 = heap.empty(DType.F32, 256, 256); SymTensor bias = heap.empty(DType.BF16, 255);
             SymTensor cOdd = heap.empty(DType.BF16, 256, 260)) {
            expect(f, () -> g.run(a72, b, GemmLayout.NK, null, c, stream), ar + "A ", "has shape [256, 72]; expected [M, K_local] = [256, 64]");
            expect(f, () -> g.run(a, b, GemmLayout.NK, null, c32, stream), ar + "C has dtype F32; expected BF16");
            expect(f, () -> g.run(a, b, GemmLayout.NK, bias, c, stream), ar + "bias ", "expected [N] = [256]");
            expect(f, () -> g.run(a, b, GemmLayout.NK, null, cOdd, stream), ar + "C's leading dimension 260 is not a multiple of 8");
            expect(f, () -> g.run(a, b, GemmLayout.NK, null, c, null), ar + "stream must not be null");
            expect(f, () -> g.run(a, b, null, null, c, stream), ar + "layout must not be null");
            SymTensor freed = heap.empty(DType.BF16, 256, 64);
            freed.close();
            expect(f, () -> g.run(a, freed, GemmLayout.NK, null, c, stream), ar + "B ", "was freed");
            // run's epoch would be replayed stale: a capture must use runReplayable, and is told so.
            try (Stream capturing = Stream.create()) {
                capturing.beginCapture();
                try {
                    f.check(capturing.isCapturing(), () -> "isCapturing() is false inside a capture");
                    expect(f, () -> g.run(a, b, GemmLayout.NK, null, c, capturing), ar
                            + "stream is capturing a CUDA graph, and run's calls cannot be replayed (each has its own epoch);"
                            + " capture runReplayable instead");
                } finally {
                    capturing.endCapture().close();
                }
                f.check(!capturing.isCapturing(), () -> "isCapturing() is true after the capture ended");
            }
            f.check(g.calls() == 0, () -> "a rejected call was counted: calls() = " + g.calls());
        }
        try (GemmReduceScatter rs = GemmReduceScatter.create(iris, 256 * world, 256, 64);
             SymTensor a = heap.empty(DType.BF16, 256 * world, 64); SymTensor b = heap.empty(DType.BF16, 64, 256);
             SymTensor c = heap.empty(DType.BF16, 256 * world, 256)) {
            expect(f, () -> rs.run(a, b, GemmLayout.KN, null, c, stream), "rank " + rank + ": GemmReduceScatter: C ",
                    "expected [M / world, ldc] with " + 256 + " rows");
        }
        int nLocal = 128;
        try (GemmAllScatter as = GemmAllScatter.create(iris, 256, nLocal, nLocal * world);
             SymTensor a = heap.empty(DType.BF16, 256, nLocal * world); SymTensor b = heap.empty(DType.BF16, nLocal, nLocal * world);
             SymTensor c = heap.empty(DType.BF16, 256, nLocal * world)) {
            expect(f, () -> as.run(a, b, GemmLayout.NK, null, a, stream), "rank " + rank + ": GemmAllScatter: C ", "overlaps A");
            expect(f, () -> as.run(a, b, GemmLayout.KN, null, c, stream), "rank " + rank + ": GemmAllScatter: B ", "for layout KN");
        }
        // Few rows of reduce-scatter: UNFUSED's collective would overwrite the columns of C past N, and
        // the kernel that such a call runs cannot split these rows.
        try (GemmReduceScatter rs = GemmReduceScatter.create(iris, 8 * world, 256, 64);
             SymTensor a = heap.empty(DType.BF16, 8 * world, 64); SymTensor b = heap.empty(DType.BF16, 256, 64);
             SymTensor c = heap.empty(DType.BF16, 8, 256 + PAD)) {
            f.check(rs.variant() == FusedVariant.UNFUSED, () -> "AUTO for 8 rows per rank: " + rs.variant() + ", expected UNFUSED");
            expect(f, () -> rs.run(a, b, GemmLayout.NK, null, c, stream), "rank " + rank + ": GemmReduceScatter: C's leading dimension ",
                    "give C N columns (ldc = N)");
        }
        expect(f, () -> GemmReduceScatter.create(iris, 8 * world, 256, 64, FusedConfig.defaults().withVariant(FusedVariant.EPILOGUE)),
                "rank " + rank + ": GemmReduceScatter: M = ", "UNFUSED, which AUTO chooses for such M");
        // Creation: a shape the operation cannot take, on every rank alike.
        if (world > 1) {
            expect(f, () -> AllGatherGemm.create(iris, 128 * world + 1, 256, 64), "rank " + rank + ": AllGatherGemm: M = ",
                    "is not a multiple of world size " + world);
        }
        expect(f, () -> AllGatherGemm.create(iris, 8 * world, 256, 64, FusedConfig.defaults().withVariant(FusedVariant.UNFUSED
                        .kernels(mainloop))), "rank " + rank + ": AllGatherGemm: M = ", "UNFUSED, which AUTO chooses for such M");
        FusedVariant missing = mainloop == GemmMainloop.PORTABLE ? FusedVariant.SPARE_WARPS : FusedVariant.EPILOGUE;
        expect(f, () -> AllGatherGemm.create(iris, 256 * world, 256, 64, FusedConfig.defaults().withVariant(missing)),
                "rank " + rank + ": AllGatherGemm: variant " + missing + " does not exist for all-gather + GEMM on the " + mainloop
                        + " mainloop");
        if (mainloop == GemmMainloop.PORTABLE) {
            expect(f, () -> AllGatherGemm.create(iris, 256 * world, 256, 512, FusedConfig.defaults().withSplitK(2)),
                    "rank " + rank + ": AllGatherGemm: config splitK 2: the portable mainloop's kernels do not split K");
            expect(f, () -> AllGatherGemm.create(iris, 256 * world, 256, 512, FusedConfig.defaults().withTileN(128)),
                    "rank " + rank + ": AllGatherGemm: config tileN 128 is not a tile width");
        }
        // Ranks that disagree: every rank learns it.
        expect(f, () -> GemmAllReduce.create(iris, rank == 0 ? 256 : 512, 256, 64), "rank " + rank + ": GemmAllReduce: rank ",
                "every rank must create it with the same shape and config");
        // One rank fails alone: it says why, the others say who.
        try {
            GemmAllReduce.create(iris, 256, 256, rank == world - 1 ? 100 : 64).close();
            f.fail("creation with K_local = 100 on rank " + (world - 1) + " succeeded");
        } catch (IllegalArgumentException e) {
            f.check(rank == world - 1 && e.getMessage().contains("K_local = 100 is not a multiple of 8"),
                    () -> "rank " + rank + ": unexpected " + e.getMessage());
        } catch (IrisException e) {
            f.check(rank != world - 1 && e.getMessage().contains("not created because rank " + (world - 1) + " could not create it"),
                    () -> "rank " + rank + ": unexpected " + e.getMessage());
        }
        // Still works, then closed.
        GemmAllReduce g = GemmAllReduce.create(iris, 256, 256, 64);
        try (Problem p = new Problem(FusedOp.ALL_REDUCE, 256, 256, 64, DType.BF16, GemmLayout.NK, true, 0, "misuse")) {
            iris.hostBarrier();
            p.run(g, stream, false);
            iris.synchronize();
            f.add(p.check("after the misuse"));
            g.close();
            g.close();
            try {
                p.run(g, stream, false);
                f.fail("run after close did not throw");
            } catch (IllegalStateException e) {
                f.check(e.getMessage().equals("rank " + rank + ": GemmAllReduce: used after close()"), () -> "after close: " + e.getMessage());
            }
        } finally {
            g.close();
        }
        f.throwIfAny();
    }

    private void expect(Failures f, Runnable call, String... fragments) {
        try {
            call.run();
            f.fail("no exception; expected one containing " + String.join(" ... ", fragments));
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            f.check(m.startsWith("rank " + rank + ": "), () -> "message does not start with the rank: " + m);
            for (String fragment : fragments) {
                f.check(m.contains(fragment), () -> "message lacks \"" + fragment + "\": " + m);
            }
        }
    }

    // =============================================================================================
    // timeout
    // =============================================================================================

    /**
     * Rank 0 alone calls a GEMM + all-reduce; nobody else does. Pass: rank 0's synchronize throws
     * IrisDeviceException after about the device timeout, naming wait site 9001 (a tile owner
     * waiting for a peer's partial, as FusedSites.describe says) and a peer; afterwards the status
     * is clear and the instance closes on every rank. Last, because rank 0's closing barrier of
     * that call has no partner.
     */
    private void timeoutNamesSite() {
        Failures f = new Failures();
        int site = FusedSites.PARTIAL_FLAG;
        f.check(String.valueOf(FusedSites.describe(site)).startsWith("GEMM + all-reduce / reduce-scatter: waiting for a peer's partial"),
                () -> "FusedSites.describe(" + site + ") = " + FusedSites.describe(site));
        // Two 128-row tiles per rank, so that rank 0 owns a tile whose peers' partials it waits for.
        int rows = 256 * world;
        // A kernel that waits at that site, not UNFUSED (AUTO's choice for so few tiles): the one UNFUSED
        // itself falls back to on this mainloop.
        FusedVariant kernel = FusedVariant.UNFUSED.kernels(mainloop);
        try (GemmAllReduce lone = GemmAllReduce.create(iris, rows, 256, 64, FusedConfig.defaults().withVariant(kernel));
             Problem p = new Problem(FusedOp.ALL_REDUCE, rows, 256, 64, DType.BF16, GemmLayout.NK, false, 0, "timeout")) {
            iris.hostBarrier();
            if (rank == 0) {
                long start = System.nanoTime();
                p.run(lone, stream, false);
                ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
                IrisDeviceException e = waited.error();
                if (e == null) {
                    f.fail("synchronize returned normally although no peer made the call");
                } else {
                    String m = String.valueOf(e.getMessage());
                    double seconds = waited.seconds();
                    f.check(m.startsWith("rank 0:"), () -> "message does not name rank 0: " + m);
                    f.check(m.contains("wait site " + site), () -> "message does not name site " + site + ": " + m);
                    f.check(e.peer() >= 1 && e.peer() < world, () -> "peer " + e.peer() + " is not a peer of rank 0: " + m);
                    f.check(seconds >= DEVICE_TIMEOUT_MS / 1000.0 - 0.1 && seconds <= 3 * DEVICE_TIMEOUT_MS / 1000.0,
                            () -> "exception after " + seconds + " s, expected about " + DEVICE_TIMEOUT_MS / 1000 + " s: " + m);
                }
                iris.checkDeviceStatus();  // cleared by the exception
            }
            iris.hostBarrier();
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    private static SymTensor track(List<SymTensor> all, SymTensor t) {
        all.add(t);
        return t;
    }

    static ByteBuffer download(SymTensor t) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(t.byteSize())).order(ByteOrder.nativeOrder());
        t.copyTo(b);
        return b.flip();
    }

    private void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        iris.synchronize();
    }

    /** A seed for a case's matrix: the same on every rank for the same parts (pass the owning rank as a part). */
    private long seed(String what, long... parts) {
        return TestSeeds.derive(runSeed, what, parts);
    }

}

package dev.irisjvm.bench.fused;

import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.results.FusedSweepResult;
import dev.irisjvm.bench.rma.Lockstep;
import dev.irisjvm.bench.rma.LockstepBench;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.CublasLtGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.baselines.RowMajorGemm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.fused.FusedConfig;
import dev.irisjvm.kernels.fused.FusedGemm;
import dev.irisjvm.kernels.fused.FusedOp;
import dev.irisjvm.kernels.fused.FusedVariant;
import dev.irisjvm.kernels.fused.TileTrace;
import dev.irisjvm.kernels.gemm.Gemm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One shape of the fused sweep on this rank; every rank runs the same calls in the same order. Per
 * shape: the inputs (uniform in [-1, 1), BF16, generated on the GPU; A replicated for all-scatter,
 * every other operand a shard of its own), then, each timed with CUDA events ({@link RepTimer}:
 * warm-up calls, then the timed calls queued behind a gate, each preceded by an untimed device
 * barrier of all ranks and framed by its own pair of events):
 *
 * <ol>
 *   <li>{@code cublas}: the rank's GEMM alone with {@code cublasGemmEx} (the compute floor), and
 *       {@code cublaslt}: with cuBLASLt's heuristic and a workspace; the faster of the two is the
 *       baselines' GEMM;</li>
 *   <li>{@code iris_gemm}: the same GEMM with the library's {@link Gemm};</li>
 *   <li>{@code nccl}: the collective alone;</li>
 *   <li>{@code baseline}: that GEMM then NCCL in sequence, the figure the fused kernels must beat;
 *       its output is the reference of the checks;</li>
 *   <li>{@code iris_ccl}: the library's own collective alone ({@link Collectives}), and {@code
 *       baseline_iris}: the GEMM then it, the fair competitor where NCCL's latency dominates (small
 *       M), checked as the fused kernels are;</li>
 *   <li>{@code baseline_window}: the GEMM then NCCL on window-registered buffers ({@link
 *       NcclWindows}: NCCL's symmetric kernels), the GEMM writing into NCCL's input window, checked
 *       as the fused kernels are; where NCCL registers no windows, a point that says why;</li>
 *   <li>{@code fused}, once per variant: a fresh instance (collective), timed, then one more call
 *       into a poisoned output, compared with the baseline's ({@link FusedOutputCheck}).</li>
 * </ol>
 *
 * With {@code --check-only} every point runs once, untimed, for its check alone.
 *
 * Per repetition the slowest rank's time counts (every rank's times are gathered); a failure on any
 * rank becomes the point's check text on every rank ({@link Lockstep}). With tracing, the first
 * shape of each operation also runs every variant with a kernel once more with {@code FusedConfig.withTracing},
 * and rank 0 writes all ranks' timelines into one Chrome trace.
 */
final class FusedBench extends LockstepBench<FusedMeasurement> {
    static final DType TYPE = FusedWorkload.TYPE;

    private final FusedOptions options;
    private final Gemm gemm;
    private final CublasGemm cublas;
    private final CublasLtGemm cublasLt;
    private final NcclComm nccl;
    private final NcclWindows windows;
    private final Collectives ccl;
    private final long runSeed;
    private final List<FusedSweepResult.Trace> traces = new ArrayList<>();
    private final Set<FusedOp> traced = EnumSet.noneOf(FusedOp.class);
    /** Shapes run so far: each shape's inputs take their seed from its place in the sweep. */
    private int shapesRun;

    /**
     * cublasLt may be null (the baselines then run cublasGemmEx); cublas is null, and nccl disabled,
     * where the run has no baseline; windows hold the largest shape's input and output of NCCL's
     * collective (or say why not: {@link NcclWindows#reason()}).
     */
    FusedBench(Iris iris, FusedOptions options, Gemm gemm, CublasGemm cublas, CublasLtGemm cublasLt, NcclComm nccl, NcclWindows windows,
               Collectives ccl, RmaKernels kernels, long runSeed) {
        super(iris, kernels, !options.checkOnly);
        this.options = options;
        this.gemm = gemm;
        this.cublas = cublas;
        this.cublasLt = cublasLt;
        this.nccl = nccl;
        this.windows = windows;
        this.ccl = ccl;
        this.runSeed = runSeed;
    }

    List<FusedSweepResult.Trace> traces() {
        return List.copyOf(traces);
    }

    private boolean baselines() {
        return cublas != null && nccl.available();
    }

    /** Everything about the sweep's next shape. */
    void run(FusedShape s) {
        int index = shapesRun++;
        String unsplittable = s.unsplittable(world);
        if (unsplittable != null) {
            if (rank == 0) {
                System.out.println("FusedSweep: " + s + " skipped: " + unsplittable);
            }
            measurements.add(FusedMeasurement.failed(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, FusedMeasurement.FUSED, "",
                    FusedMeasurement.UNSPLITTABLE + unsplittable));
            return;
        }
        try (FusedWorkload buf = FusedWorkload.allocate(iris, s, runSeed + 1000L * index)) {
            RowMajorGemm vendor = null;
            String vendorName = "";
            if (baselines()) {
                FusedMeasurement plain = point(s, FusedMeasurement.CUBLAS, "", () -> buf.vendorGemm(cublas), null);
                vendor = cublas;
                vendorName = FusedMeasurement.CUBLAS;
                if (cublasLt != null) {
                    // cuBLASLt's product is held to cublasGemmEx's before it may stand in for it.
                    ByteBuffer product = download(buf.localProduct());
                    FusedMeasurement lt = point(s, FusedMeasurement.CUBLASLT, "", () -> buf.vendorGemm(cublasLt),
                            () -> gemmCheck(s, buf, product));
                    if (lt.reps() > 0 && !lt.checkFailed() && (plain.reps() == 0 || lt.medianUs() < plain.medianUs())) {
                        vendor = cublasLt;
                        vendorName = FusedMeasurement.CUBLASLT;
                    }
                }
            } else {
                skipped(s, FusedMeasurement.CUBLAS, "not measured (" + baselineReason() + ")");
            }
            point(s, FusedMeasurement.IRIS_GEMM, "", () -> buf.irisGemm(gemm), null);
            point(s, FusedMeasurement.IRIS_CCL, buf.irisAlgorithm(ccl), () -> buf.irisCollective(ccl), null);
            ByteBuffer reference = null;
            if (baselines()) {
                RowMajorGemm g = vendor;
                point(s, FusedMeasurement.NCCL, "", () -> buf.collective(nccl), null);
                point(s, FusedMeasurement.BASELINE, vendorName, () -> buf.baseline(g, nccl), null);
                reference = download(buf.baselineOutput());
                ByteBuffer ref = reference;
                point(s, FusedMeasurement.BASELINE_IRIS, vendorName, () -> buf.baselineIris(g, ccl),
                        () -> checkAgainst(s, buf.baselineIrisOutput(), () -> buf.baselineIris(g, ccl), ref, false));
                if (windows.available()) {
                    buf.stageWindow(windows);
                    point(s, FusedMeasurement.BASELINE_WINDOW, vendorName, () -> buf.baselineWindow(g, nccl, windows),
                            () -> windowCheck(s, buf, g, ref));
                } else {
                    skipped(s, FusedMeasurement.BASELINE_WINDOW, "not measured (NCCL on windows unavailable: " + windows.reason() + ")");
                }
            } else {
                skipped(s, FusedMeasurement.NCCL, "not measured (" + baselineReason() + ")");
                skipped(s, FusedMeasurement.BASELINE, "not measured (" + baselineReason() + ")");
                skipped(s, FusedMeasurement.BASELINE_IRIS, "not measured (" + baselineReason() + ")");
                skipped(s, FusedMeasurement.BASELINE_WINDOW, "not measured (" + baselineReason() + ")");
            }
            for (FusedVariant v : s.op().variants()) {
                fused(s, buf, v, reference);
            }
            if (options.trace() && s.op().kernelsTakeRows(s.m(), world) && traced.add(s.op())) {
                for (FusedVariant v : s.op().kernelVariants()) {  // UNFUSED runs no kernel to trace
                    trace(s, buf, v);
                }
            }
        }
    }

    private String baselineReason() {
        if (!options.baseline()) {
            return "--no-baseline";
        }
        return cublas == null ? "cuBLAS unavailable" : "NCCL unavailable: " + nccl.reason();
    }

    // ---- the fused kernels ------------------------------------------------------------------------

    /** The options' config for that shape and variant; --split-k applies to the operations that split K. */
    private FusedConfig config(FusedShape s, FusedVariant v) {
        return FusedConfig.defaults().withGroupM(options.groupM).withVariant(v).withTileN(options.tileN)
                .withSplitK(s.op().splitsK() ? options.splitK : 0);
    }

    private void fused(FusedShape s, FusedWorkload buf, FusedVariant v, ByteBuffer reference) {
        if (v != FusedVariant.UNFUSED && !s.op().kernelsTakeRows(s.m(), world)) {
            record(FusedMeasurement.failed(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, FusedMeasurement.FUSED, v.kernelName(),
                    FusedMeasurement.KERNEL_ROWS + "M = " + s.m() + " is not a multiple of 128 x " + world + " (UNFUSED runs it)"));
            return;
        }
        FusedConfig config = config(s, v);
        FusedGemm g;
        try {
            g = buf.create(config);
        } catch (RuntimeException e) {
            String why = "not run: creation failed: " + Lockstep.oneLine(e);
            record(FusedMeasurement.failed(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, FusedMeasurement.FUSED,
                    v.kernelName(), why));
            return;
        }
        try {
            point(s, FusedMeasurement.FUSED, v.kernelName(), () -> buf.fused(g),
                    () -> check(s, buf, g, reference));
        } finally {
            iris.synchronize();
            g.close();
        }
    }

    /** One more call into a poisoned output, compared with the baseline's output. */
    private String check(FusedShape s, FusedWorkload buf, FusedGemm g, ByteBuffer reference) {
        return checkAgainst(s, buf.fusedOutput(), () -> buf.fused(g), reference, true);
    }

    /**
     * The window baseline once more, its window 1 and its output poisoned first, its result copied
     * out of the window, compared with the baseline's output.
     */
    private String windowCheck(FusedShape s, FusedWorkload buf, RowMajorGemm vendor, ByteBuffer reference) {
        buf.poisonWindow(windows);  // on the stream, before rerunPoisoned synchronizes and meets the peers
        return checkAgainst(s, buf.windowOutput(), () -> {
            buf.baselineWindow(vendor, nccl, windows);
            buf.collectWindow(windows);
        }, reference, false);
    }

    /** cuBLASLt's GEMM once more into the poisoned product, compared with cublasGemmEx's. */
    private String gemmCheck(FusedShape s, FusedWorkload buf, ByteBuffer reference) {
        return FusedOutputCheck.compareProducts(s, world, rerunPoisoned(buf.localProduct(), () -> buf.vendorGemm(cublasLt)),
                reference, TYPE);
    }

    /**
     * {@code call} once more into {@code output}, poisoned on every rank first, compared with the
     * baseline's output; {@code fusedLayout}: whether the output is laid out as the fused kernel's
     * (else as the baseline's).
     */
    private String checkAgainst(FusedShape s, SymTensor output, Runnable call, ByteBuffer reference, boolean fusedLayout) {
        if (reference == null) {
            return "not checked (" + baselineReason() + ")";
        }
        return FusedOutputCheck.compare(s, world, rerunPoisoned(output, call), reference, TYPE, fusedLayout);
    }

    /** {@code call} once more into {@code output}, poisoned on every rank first; what it wrote. */
    private ByteBuffer rerunPoisoned(SymTensor output, Runnable call) {
        Memcpy.memset(output.deviceAddress(), 0xFF, output.byteSize(), stream);
        iris.synchronize();
        iris.hostBarrier();  // every rank poisoned before any peer stores into its output
        call.run();
        iris.synchronize();
        return download(output);
    }

    // ---- timing ------------------------------------------------------------------------------------

    private FusedMeasurement point(FusedShape s, String impl, String variant, Runnable call, Lockstep.Check verify) {
        Lockstep.Outcome o = lockstep.everyone(null,
                () -> timer.run(options.warmup(), options.reps(), r -> iris.barrier(stream), r -> call.run(), true), verify);
        String check = Verifier.agree(iris, o.check());
        if (verify == null && Verifier.OK.equals(check)) {
            check = FusedMeasurement.BASELINE.equals(impl) ? FusedMeasurement.REFERENCE : "";
        }
        FusedMeasurement m;
        if (o.millis() == null) {
            m = FusedMeasurement.failed(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, impl, variant, check);
        } else {
            float[][] all = gatherMillis(o.millis());
            float[] slowest = new float[o.millis().length];
            List<Double> rankMedians = new ArrayList<>();
            for (int r = 0; r < all.length; r++) {
                rankMedians.add(TimingStats.ofMillis(all[r], 1).medianUs());
                for (int i = 0; i < slowest.length; i++) {
                    slowest[i] = Math.max(slowest[i], all[r][i]);
                }
            }
            TimingStats t = TimingStats.ofMillis(slowest, 1);
            boolean auto = FusedMeasurement.FUSED.equals(impl)
                    && FusedVariant.choose(s.op(), s.m(), s.localN(world), s.localK(world), world,
                            iris.deviceProperties().multiprocessorCount()).kernelName().equals(variant);
            m = new FusedMeasurement(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, impl, variant, auto, t.reps(), t.medianUs(),
                    t.minUs(), t.maxUs(), rankMedians, s.flopsPerRank(world), s.nvlinkBytes(world, TYPE.byteSize()), check);
        }
        record(m);
        return m;
    }

    private void skipped(FusedShape s, String impl, String why) {
        FusedMeasurement m = FusedMeasurement.failed(s.op().id(), s.id(), s.m(), s.n(), s.k(), world, impl, "", why);
        measurements.add(m);
    }

    private float[][] gatherMillis(float[] mine) {
        ByteBuffer b = ByteBuffer.allocate(4 * mine.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : mine) b.putFloat(x);
        byte[][] all = iris.allGather(b.array());
        float[][] out = new float[all.length][];
        for (int r = 0; r < all.length; r++) {
            ByteBuffer theirs = ByteBuffer.wrap(all[r]).order(ByteOrder.LITTLE_ENDIAN);
            out[r] = new float[all[r].length / 4];
            for (int i = 0; i < out[r].length; i++) out[r][i] = theirs.getFloat();
        }
        return out;
    }

    private void record(FusedMeasurement m) {
        String impl = m.impl() + (m.variant().isEmpty() ? "" : " " + m.variant());
        String what = String.format(Locale.ROOT, "  %-15s %-18s %-24s", m.op(), m.shape(), impl);
        if (options.checkOnly) {
            keep(m, what + " " + (m.check().isEmpty() ? "ran (nothing to check)" : "check: " + m.check()));
            return;
        }
        keep(m, what + " " + (m.reps() == 0 ? m.check() : String.format(Locale.ROOT, "%10.1f us (max over ranks per rep; min %.1f, "
                + "max %.1f) %s", m.medianUs(), m.minUs(), m.maxUs(), m.check().isEmpty() ? "" : "check: " + m.check())));
    }

    // ---- traces ------------------------------------------------------------------------------------

    /** A traced instance of that variant: two calls, the second's timeline written by rank 0 (all ranks in one file). */
    private void trace(FusedShape s, FusedWorkload buf, FusedVariant v) {
        String file = "fused-trace-" + s.op().id() + "-" + v.kernelName() + ".json";
        try (FusedGemm g = buf.create(config(s, v).withTracing(true))) {
            for (int i = 0; i < 2; i++) {
                iris.barrier(stream);
                buf.fused(g);
            }
            TileTrace t = g.readTrace(stream);
            byte[][] all = iris.allGather(t.toBytes());
            List<TileTrace> ranks = new ArrayList<>();
            List<FusedSweepResult.RankSummary> summaries = new ArrayList<>();
            for (byte[] one : all) {
                TileTrace tr = TileTrace.fromBytes(one);
                ranks.add(tr);
                TileTrace.Summary sum = tr.summary();
                summaries.add(new FusedSweepResult.RankSummary(tr.rank(), sum.computeEvents(), sum.epilogueEvents(), sum.copyEvents(),
                        sum.spanUs(), sum.computeUs(), sum.communicationUs(), sum.overlappedUs()));
            }
            if (rank == 0) {
                Path path = options.traces().resolve(file);
                TileTrace.writeChromeJson(ranks, path);
                System.out.println("FusedSweep: trace " + path + ": " + t);
            }
            traces.add(new FusedSweepResult.Trace(s.op().id(), s.id(), v.kernelName(), file, summaries));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        } catch (RuntimeException e) {
            if (rank == 0) {
                System.out.println("FusedSweep: trace of " + s + " " + v.kernelName() + " failed: " + Lockstep.oneLine(e));
            }
            try {
                iris.synchronize();
            } catch (RuntimeException ignored) {
                // reported above
            }
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------

    static ByteBuffer download(SymTensor t) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(t.byteSize())).order(ByteOrder.nativeOrder());
        t.copyTo(b);
        return b.flip();
    }
}

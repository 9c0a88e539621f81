package dev.irisjvm.bench.ccl;

import dev.irisjvm.bench.Seeds;
import dev.irisjvm.bench.ccl.Tolerance.Rounding;
import dev.irisjvm.bench.report.BusBandwidth;
import dev.irisjvm.bench.report.CclFigures;
import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.rma.Lockstep;
import dev.irisjvm.bench.rma.MeasurementLog;
import dev.irisjvm.bench.rma.Points;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * Times the collectives of one op over the sweep's sizes on this rank; every rank runs the same
 * calls in the same order. Per size:
 *
 * <ol>
 *   <li>fresh random inputs (seeded per point and rank), an output and a reference buffer;</li>
 *   <li>the reference output: one untimed NCCL call into the reference buffer, or, without NCCL,
 *       {@link HostReference};</li>
 *   <li>per implementation (nccl, nccl_window, nccl_p2p for all-gather and broadcast, then iris:
 *       each all-reduce algorithm, or the op's one kernel): the output is poisoned (nccl_window:
 *       the input is first copied into its input window,
 *       see {@link NcclWindows}), then <em>eager</em>: warm-up repetitions, then the timed ones queued
 *       behind {@link RepTimer}'s gate, each a device barrier of all ranks (untimed), a CUDA event,
 *       {@code --eager-calls} calls launched back to back, a CUDA event; time per call = repetition
 *       ÷ calls, as nccl-tests times. The ranks leave a barrier one NVLink trip apart (the last to
 *       arrive sees everyone at once, the others a trip later); with one call per repetition that
 *       skew lands in the call, costing a one-trip exchange (iris's one-shot) a whole trip while a
 *       pipelined one (NCCL's ring) absorbs it, so back-to-back calls measure both alike. Then the
 *       output is checked against the reference;</li>
 *   <li><em>graph</em> ({@code impl_graph}): the output is poisoned, one eager call, then
 *       {@code --graph-calls} calls captured back to back into one CUDA graph, replayed like an
 *       eager call (barrier, event, replay, event); time per call = replay ÷ calls; then the check;</li>
 *   <li>up to {@code --one-call-max-bytes}, <em>one call</em> ({@code impl_call}, {@code impl_graph_call}):
 *       per repetition a device barrier this host waits for, then on the host's clock one call (or
 *       the replay of a graph of one call) and a stream synchronize: launch to completion, as a
 *       training step that waits for its collective sees it; then the check.</li>
 * </ol>
 *
 * Every step goes through {@link Lockstep#everyone}: a failure on any rank becomes the point's
 * check text on every rank and the sweep goes on. Each rank records its own measurement (issuer =
 * rank, peer = -1); the report takes the slowest rank.
 *
 * <pre>{@code
 * try (CclBench bench = new CclBench(iris, options, ccl, rmaKernels, nccl, windows, runSeed)) {
 *     bench.run(CclOp.ALL_REDUCE);
 *     List<Measurement> all = bench.log().gather(iris);
 * }
 * }</pre>
 */
public final class CclBench implements AutoCloseable {
    /** One call of an implementation, enqueued on a stream (capturable). */
    @FunctionalInterface
    interface Call {
        void enqueue(Stream s);
    }

    /**
     * An implementation of the op at one size.
     *
     * @param stage  readies its buffers before each run: poisons the output (and copies the input
     *               where the implementation reads its own buffers)
     * @param result the device address of its output, checked against the reference
     */
    record Variant(String impl, Rounding rounding, Call call, Runnable stage, long result) {}

    private final Iris iris;
    private final CclOptions options;
    private final Collectives ccl;
    private final NcclComm nccl;
    private final NcclWindows windows;
    private final Stream stream;
    private final RepTimer timer;
    private final Verifier verifier;
    private final OutputCheck outputs;
    private final HostReference host;
    private final Lockstep lockstep;
    private final MeasurementLog log = new MeasurementLog();
    private final long runSeed;
    private final int rank;
    private final int world;
    private final DType dtype;
    private final ReduceOp reduceOp;
    private final Set<String> notices = new HashSet<>();
    private long point;

    /**
     * @param windows NCCL's window-registered buffers of the sweep's largest size (input, output),
     *                or an unavailable instance, which the sweep records once per op
     */
    public CclBench(Iris iris, CclOptions options, Collectives ccl, RmaKernels kernels, NcclComm nccl, NcclWindows windows,
                    long runSeed) {
        this.iris = iris;
        this.options = options;
        this.ccl = ccl;
        this.nccl = nccl;
        this.windows = windows;
        this.runSeed = runSeed;
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.stream = iris.stream();
        this.dtype = options.dtype;
        this.reduceOp = options.reduceOp;
        this.timer = new RepTimer(iris, kernels, stream, options.sweep.gate());
        this.verifier = new Verifier(iris, kernels, stream);
        this.outputs = new OutputCheck(iris, verifier, stream);
        this.host = new HostReference(iris, stream);
        this.lockstep = new Lockstep(iris);
    }

    public MeasurementLog log() {
        return log;
    }

    /** Every size of {@code op}. */
    public void run(CclOp op) {
        if (options.nccl() && !nccl.available()) {
            long number = ++point;
            if (rank == 0) {
                record(number, Points.failed(op.id(), "nccl", 0, 0, -1, "nccl unavailable: " + nccl.reason()));
            }
        } else if (nccl.available() && !windows.available()) {
            long number = ++point;
            if (rank == 0) {
                record(number, Points.failed(op.id(), CclFigures.NCCL_WINDOW, 0, 0, -1, CclFigures.WINDOW_UNAVAILABLE + windows.reason()));
            }
        }
        for (long bytes : options.sizes()) {
            point(op, bytes);
        }
    }

    private void point(CclOp op, long nominal) {
        CclOp.Shape shape = op.shape(nominal, dtype.byteSize(), world);
        if (shape == null) {
            notice(op.id() + " " + nominal, op.id() + ": " + SizeList.format(nominal) + " holds less than one " + dtype
                    + " element per rank; skipped");
            return;
        }
        long number = ++point;
        int reps = options.repsFor(shape.bytes());
        try (SymTensor in = iris.heap().uniform(Seeds.point(runSeed, number, rank), -1.0, 1.0, dtype, shape.inCount());
             SymTensor out = op == CclOp.BROADCAST ? null : iris.heap().empty(dtype, shape.outCount());
             SymTensor ref = iris.heap().empty(dtype, shape.outCount())) {
            List<Variant> variants = variants(op, shape, in, out);
            Lockstep.Outcome reference = lockstep.everyone(
                    () -> {
                        poison(ref);
                        iris.synchronize();
                    },
                    () -> {
                        buildReference(op, shape, in, ref);
                        return null;
                    },
                    null);
            if (!reference.ok()) {
                for (Variant v : variants) {
                    String why = "not run: the reference output failed: " + reference.check();
                    record(++point, Points.failed(op.id(), v.impl(), shape.bytes(), rank, -1, why));
                    if (options.graph()) {
                        record(++point, Points.failed(op.id(), v.impl() + "_graph", shape.bytes(), rank, -1, why));
                    }
                }
                return;
            }
            for (Variant v : variants) {
                eager(op, shape, v, ref, reps);
                if (options.graph()) {
                    graph(op, shape, v, ref, reps);
                }
            }
            if (shape.bytes() <= options.oneCallMaxBytes) {
                for (Variant v : variants) {
                    oneCall(op, shape, v, ref, reps, false);
                    if (options.graph()) {
                        oneCall(op, shape, v, ref, reps, true);
                    }
                }
            }
        }
    }

    private List<Variant> variants(CclOp op, CclOp.Shape shape, SymTensor in, SymTensor out) {
        List<Variant> v = new ArrayList<>();
        SymTensor result = op == CclOp.BROADCAST ? in : out;
        long resultBytes = shape.outCount() * dtype.byteSize();
        if (nccl.available()) {
            v.add(onTensors("nccl", Rounding.NCCL, ncclCall(op, shape, in.deviceAddress(), result.deviceAddress()), op, result,
                    resultBytes));
        }
        if (windows.available()) {
            v.add(windowVariant(op, shape, in));
        }
        if (nccl.available()) {
            PointToPoint.of(op, shape.inCount(), world, rank, options.root).ifPresent(p -> v.add(onTensors(CclFigures.NCCL_P2P,
                    Rounding.NCCL, s -> p.enqueue(nccl, in.deviceAddress(), result.deviceAddress(), dtype, s), op, result, resultBytes)));
        }
        switch (op) {
            case ALL_REDUCE -> {
                for (AllReduceAlgorithm a : options.algorithms()) {
                    if (a == AllReduceAlgorithm.ONE_SHOT && shape.bytes() > ccl.oneShotCapacityBytes()) {
                        notice("one_shot capacity", "all_reduce iris_one_shot: skipped above " + SizeList.format(ccl.oneShotCapacityBytes())
                                + " per rank (staging " + SizeList.format(options.stagingBytes) + " / " + world + " ranks; --staging-bytes)");
                        continue;
                    }
                    Rounding r = Tolerance.of(ccl.resolve(a, shape.bytes()));
                    v.add(onTensors(CclOptions.implName(a), r, s -> ccl.allReduce(in, out, reduceOp, a, s), op, result, resultBytes));
                }
            }
            case REDUCE_SCATTER -> v.add(onTensors("iris", Rounding.ONCE, s -> ccl.reduceScatter(in, out, reduceOp, s), op, result, resultBytes));
            case ALL_GATHER -> v.add(onTensors("iris", Rounding.ONCE, s -> ccl.allGather(in, out, s), op, result, resultBytes));
            case ALL_TO_ALL -> v.add(onTensors("iris", Rounding.ONCE, s -> ccl.allToAll(in, out, s), op, result, resultBytes));
            case BROADCAST -> v.add(onTensors("iris", Rounding.ONCE, s -> ccl.broadcast(in, options.root, s), op, result, resultBytes));
        }
        return v;
    }

    /** A variant that reads the point's input tensor and writes {@code result}. */
    private Variant onTensors(String impl, Rounding r, Call call, CclOp op, SymTensor result, long resultBytes) {
        return new Variant(impl, r, call, () -> poisonOutput(op, result.deviceAddress(), resultBytes), result.deviceAddress());
    }

    /**
     * NCCL on its window-registered buffers: the same call as plain NCCL's, from window 0 into
     * window 1 (broadcast: in place in window 0), after this point's input is copied into window 0.
     */
    private Variant windowVariant(CclOp op, CclOp.Shape shape, SymTensor in) {
        long win = windows.address(0);
        long wout = op == CclOp.BROADCAST ? win : windows.address(1);
        long inBytes = shape.inCount() * dtype.byteSize();
        long outBytes = shape.outCount() * dtype.byteSize();
        Runnable stage = () -> {
            if (op != CclOp.BROADCAST || rank == options.root) {
                Memcpy.deviceToDevice(win, in.deviceAddress(), inBytes, stream);
            }
            poisonOutput(op, wout, outBytes);
        };
        return new Variant(CclFigures.NCCL_WINDOW, Rounding.NCCL, ncclCall(op, shape, win, wout), stage, wout);
    }

    /** NCCL's call for this op from {@code in} into {@code out} (broadcast: from the root's {@code in}). */
    private Call ncclCall(CclOp op, CclOp.Shape shape, long in, long out) {
        return switch (op) {
            case ALL_REDUCE -> s -> nccl.allReduce(in, out, shape.outCount(), dtype, reduceOp, s);
            case REDUCE_SCATTER -> s -> nccl.reduceScatter(in, out, shape.outCount(), dtype, reduceOp, s);
            case ALL_GATHER -> s -> nccl.allGather(in, out, shape.inCount(), dtype, s);
            case ALL_TO_ALL -> s -> nccl.allToAll(in, out, shape.inCount() / world, dtype, s);
            case BROADCAST -> s -> nccl.broadcast(in, out, shape.inCount(), dtype, options.root, s);
        };
    }

    private void buildReference(CclOp op, CclOp.Shape shape, SymTensor in, SymTensor ref) {
        if (nccl.available()) {
            ncclCall(op, shape, in.deviceAddress(), ref.deviceAddress()).enqueue(stream);
            iris.synchronize(stream);
        } else {
            host.build(op, shape, in, ref.deviceAddress(), dtype, reduceOp, options.root);
        }
    }

    private Rounding referenceRounding() {
        return nccl.available() ? Rounding.NCCL : Rounding.ONCE;
    }

    private void eager(CclOp op, CclOp.Shape shape, Variant v, SymTensor ref, int reps) {
        long number = ++point;
        int calls = options.eagerCalls;
        Lockstep.Outcome o = lockstep.everyone(
                () -> prepare(v),
                () -> timer.run(options.warmup, reps, r -> iris.barrier(stream), r -> {
                    for (int i = 0; i < calls; i++) {
                        v.call().enqueue(stream);
                    }
                }, true),
                () -> verify(op, shape, v, ref));
        record(number, measurement(op.id(), v.impl(), shape.bytes(), rank, o, calls));
    }

    private void graph(CclOp op, CclOp.Shape shape, Variant v, SymTensor ref, int reps) {
        long number = ++point;
        int calls = options.graphCalls;
        Lockstep.Outcome o = lockstep.everyone(
                () -> prepare(v),
                () -> replaying(v.call(), calls,
                        g -> timer.run(options.graphWarmup, reps, r -> iris.barrier(stream), r -> g.launch(stream), true)),
                () -> verify(op, shape, v, ref));
        record(number, measurement(op.id(), v.impl() + "_graph", shape.bytes(), rank, o, calls));
    }

    /**
     * One call as a Java training step issues it and waits for it: per repetition the ranks meet on
     * the GPU and this host waits for that (untimed), then from the call (or the replay of a graph of
     * one call) to the end of a stream synchronize, on the host's clock.
     */
    private void oneCall(CclOp op, CclOp.Shape shape, Variant v, SymTensor ref, int reps, boolean graph) {
        long number = ++point;
        Lockstep.Outcome o = lockstep.everyone(
                () -> prepare(v),
                () -> {
                    if (graph) {
                        return replaying(v.call(), 1, g -> fromJava(g::launch, reps));
                    }
                    v.call().enqueue(stream);   // as before a capture: the first call's set-up is not timed
                    iris.synchronize(stream);
                    return fromJava(v.call(), reps);
                },
                () -> verify(op, shape, v, ref));
        record(number, measurement(op.id(), v.impl() + CclFigures.suffix(graph, true), shape.bytes(), rank, o, 1));
    }

    /** Warm-up, then {@code reps} times: the ranks meet, then {@code once} timed from the call to the stream's completion (ms). */
    private float[] fromJava(Call once, int reps) {
        float[] ms = new float[reps];
        for (int r = -options.warmup; r < reps; r++) {
            iris.barrier(stream);
            iris.synchronize(stream);
            long t0 = System.nanoTime();
            once.enqueue(stream);
            iris.synchronize(stream);
            if (r >= 0) {
                ms[r] = (System.nanoTime() - t0) / 1e6f;
            }
        }
        return ms;
    }

    /**
     * {@code body} on a graph of {@code calls} calls captured after one eager call (whatever a first
     * call sets up happens there, not in the capture); the graph goes once no replay is queued.
     */
    private float[] replaying(Call call, int calls, Function<CudaGraph, float[]> body) {
        call.enqueue(stream);
        iris.synchronize(stream);
        CudaGraph g = capture(call, calls);
        try {
            return body.apply(g);
        } finally {
            try {
                stream.synchronize();
            } catch (RuntimeException ignored) {
                // the run already failed; Lockstep reports that failure
            }
            g.close();
        }
    }

    /** {@code calls} calls captured back to back on the sweep's stream. */
    private CudaGraph capture(Call call, int calls) {
        stream.beginCapture();
        try {
            for (int i = 0; i < calls; i++) {
                call.enqueue(stream);
            }
        } catch (RuntimeException | Error e) {
            try {
                stream.endCapture().close();   // leaves the stream usable
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        return stream.endCapture();
    }

    private void prepare(Variant v) {
        v.stage().run();
        iris.synchronize();
    }

    /** Poisons an output (broadcast: the buffer of every rank but the root). */
    private void poisonOutput(CclOp op, long address, long bytes) {
        if (op != CclOp.BROADCAST || rank != options.root) {
            Memcpy.memset(address, 0xFF, bytes, stream);
        }
    }

    private String verify(CclOp op, CclOp.Shape shape, Variant v, SymTensor ref) {
        double bound = op.reduction() ? Tolerance.bound(reduceOp, dtype, world, v.rounding(), referenceRounding()) : Double.NaN;
        String what = "rank " + rank + "'s output vs " + (nccl.available() ? "NCCL's" : "the host reference");
        return outputs.compare(ref.deviceAddress(), v.result(), shape.outCount(), dtype, bound, what);
    }

    private void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
    }

    /** A measurement of this rank: per-call times; zeros and the reason where nothing was timed. */
    static Measurement measurement(String op, String impl, long bytes, int rank, Lockstep.Outcome o, long perRep) {
        if (o.millis() == null || o.millis().length == 0) {
            return Points.failed(op, impl, bytes, rank, -1, o.check());
        }
        TimingStats t = TimingStats.ofMillis(o.millis(), perRep);
        return new Measurement(op, impl, bytes, rank, -1, t.reps(), t.medianUs(), t.minUs(), t.maxUs(), t.gbps(bytes), 0.0, o.check());
    }

    private void record(long number, Measurement m) {
        log.add(number, m);
        boolean ok = Verifier.OK.equals(m.check());
        if (!ok) {
            System.out.println("rank " + rank + ": CHECK FAILED " + m.op() + " " + m.impl() + " " + SizeList.format(m.bytes()) + ": "
                    + m.check());
        } else if (rank == 0) {
            double bus = BusBandwidth.busGbps(m.op(), world, m.gbps());
            System.out.printf(Locale.ROOT, "  %-15s %-22s %10s %12.2f us %9.1f GB/s bus (rank 0)%n", m.op(), m.impl(),
                    SizeList.format(m.bytes()), m.medianUs(), bus);
        }
    }

    private void notice(String key, String text) {
        if (notices.add(key) && rank == 0) {
            System.out.println("CclSweep: " + text);
        }
    }

    /** Collective: frees the verifier's buffer and the timer's events. */
    @Override
    public void close() {
        verifier.close();
        timer.close();
    }
}

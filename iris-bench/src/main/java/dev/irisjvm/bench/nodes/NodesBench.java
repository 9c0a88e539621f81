package dev.irisjvm.bench.nodes;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.Seeds;
import dev.irisjvm.bench.ccl.CclOp;
import dev.irisjvm.bench.gemm.RoundTimes;
import dev.irisjvm.bench.report.BusBandwidth;
import dev.irisjvm.bench.results.NodesMeasurement;
import dev.irisjvm.bench.rma.Lockstep;
import dev.irisjvm.bench.rma.LockstepBench;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.bench.rma.TurnsInRounds;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.ccl.WorldCollectives;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import java.util.List;
import java.util.Locale;

/**
 * One point of the nodes benchmark on this rank (a world collective at one size); every rank runs
 * the same calls in the same order. Per point: inputs uniform in [-1, 1) generated on the GPU, a
 * distinct seed per rank; the check, once (both implementations into poisoned outputs, the
 * two-level output against the flat one, {@link NodesOutputCheck}); then rounds in which {@code
 * hierarchical} ({@link WorldCollectives}) and {@code flat_nccl} (one NCCL collective over every
 * rank) take turns in an order that changes every round ({@link TurnsInRounds}), each timed with {@link RepTimer} (warm-up calls,
 * then the timed ones queued behind a gate, each preceded by an untimed device barrier of all ranks
 * and framed by its own CUDA events). Per call the slowest rank's time counts. A failure on any
 * rank becomes the point's check text on every rank ({@link Lockstep}).
 */
final class NodesBench extends LockstepBench<NodesMeasurement> {
    private record Timed(String impl, Runnable call, RepTimer.Rep before) implements TurnsInRounds.Turn {
        @Override
        public RepTimer.Rep body() {
            return r -> call.run();
        }
    }

    private final NodesOptions options;
    private final RoundsOptions timing;
    private final WorldCollectives collectives;
    private final NcclCommunicator flat;
    private final DType dtype;
    private final int nodes;
    private final int ranksPerNode;
    private long point;

    NodesBench(Iris iris, NodesOptions options, WorldCollectives collectives, NcclCommunicator flat, RmaKernels kernels) {
        super(iris, kernels);
        this.options = options;
        this.timing = options.rounds();
        this.collectives = collectives;
        this.flat = flat;
        this.dtype = options.dtype();
        this.ranksPerNode = iris.node().size();
        this.nodes = world / ranksPerNode;
    }

    /** Everything about one collective at one size. */
    void run(CclOp op, long bytes) {
        long number = ++point;
        CclOp.Shape shape = op.shape(bytes, dtype.byteSize(), world);
        if (shape == null || shape.inCount() % ranksPerNode != 0 || shape.outCount() % ranksPerNode != 0) {
            notRun(op, bytes, SizeList.format(bytes) + " of " + dtype + " does not split into whole elements per rank and node");
            return;
        }
        try (SymTensor in = iris.heap().uniform(Seeds.point(timing.seed(), number, rank), -1, 1, dtype, shape.inCount());
             SymTensor twoLevel = iris.heap().empty(dtype, shape.outCount());
             SymTensor reference = iris.heap().empty(dtype, shape.outCount())) {
            List<Timed> impls = List.of(
                    timed(NodesMeasurement.HIERARCHICAL, () -> hierarchical(op, in, twoLevel, stream)),
                    timed(NodesMeasurement.FLAT, () -> flat(op, shape, in, reference, stream)));
            Lockstep.Outcome checked = lockstep.everyone(null, () -> null, () -> check(op, impls, twoLevel, reference));
            String check = Verifier.agree(iris, checked.check());
            TurnsInRounds.Outcome<Timed> turns = TurnsInRounds.time(iris, lockstep, timer, impls, timing.rounds(), timing.warmup(),
                    timing.reps());
            for (Timed i : impls) {
                String failure = turns.failures().get(i);
                String c = failure != null ? NodesMeasurement.NOT_RUN + failure
                        : NodesMeasurement.FLAT.equals(i.impl()) ? NodesMeasurement.REFERENCE : check;
                record(op, shape.bytes(), i.impl(), turns.times().get(i), c);
            }
        } catch (RuntimeException e) {
            notRun(op, bytes, lockstep.recover(e));
        }
    }

    private void hierarchical(CclOp op, SymTensor in, SymTensor out, Stream s) {
        switch (op) {
            case ALL_REDUCE -> collectives.allReduce(in, out, ReduceOp.SUM, s);
            case ALL_GATHER -> collectives.allGather(in, out, s);
            case REDUCE_SCATTER -> collectives.reduceScatter(in, out, ReduceOp.SUM, s);
            case ALL_TO_ALL -> collectives.allToAll(in, out, s);
            default -> throw new IllegalArgumentException(op.id() + " has no two-level form here");
        }
    }

    private void flat(CclOp op, CclOp.Shape shape, SymTensor in, SymTensor out, Stream s) {
        long a = in.deviceAddress();
        long b = out.deviceAddress();
        switch (op) {
            case ALL_REDUCE -> flat.allReduce(a, b, shape.inCount(), dtype, ReduceOp.SUM, s);
            case ALL_GATHER -> flat.allGather(a, b, shape.inCount(), dtype, s);
            case REDUCE_SCATTER -> flat.reduceScatter(a, b, shape.outCount(), dtype, ReduceOp.SUM, s);
            case ALL_TO_ALL -> {
                long each = shape.inCount() / world;
                long[] offsets = new long[world];
                long[] counts = new long[world];
                for (int p = 0; p < world; p++) {
                    offsets[p] = p * each;
                    counts[p] = each;
                }
                flat.sendRecv(a, offsets, counts, b, offsets, counts, dtype, s);
            }
            default -> throw new IllegalArgumentException(op.id() + " has no flat form here");
        }
    }

    /** Both implementations once into poisoned outputs; "ok" or what differs on this rank. */
    private String check(CclOp op, List<Timed> impls, SymTensor twoLevel, SymTensor reference) {
        Memcpy.memset(twoLevel.deviceAddress(), 0xFF, twoLevel.byteSize(), stream);
        Memcpy.memset(reference.deviceAddress(), 0xFF, reference.byteSize(), stream);
        iris.synchronize();
        iris.hostBarrier();  // every rank poisoned before any peer stores into its output
        for (Timed i : impls) {
            i.call().run();
        }
        iris.synchronize();
        String why = NodesOutputCheck.compare(op.reduction(), dtype, world, twoLevel.toFloatArray(), reference.toFloatArray());
        return why == null ? Verifier.OK : "rank " + rank + ": " + why;
    }

    /** A call that takes its turns after an untimed device barrier of all ranks. */
    private Timed timed(String impl, Runnable call) {
        return new Timed(impl, call, r -> iris.barrier(stream));
    }

    private void notRun(CclOp op, long bytes, String why) {
        for (String impl : List.of(NodesMeasurement.HIERARCHICAL, NodesMeasurement.FLAT)) {
            record(NodesMeasurement.failed(op.id(), id(dtype), bytes, nodes, ranksPerNode, impl, why));
        }
    }

    private void record(CclOp op, long bytes, String impl, RoundTimes r, String check) {
        if (r == null) {
            record(NodesMeasurement.failed(op.id(), id(dtype), bytes, nodes, ranksPerNode, impl, check.isEmpty() ? "nothing timed" : check));
            return;
        }
        TimingStats all = r.all();
        double busGBs = bytes / (all.medianUs() * 1e3) * BusBandwidth.factor(op.id(), world);
        record(new NodesMeasurement(op.id(), id(dtype), bytes, nodes, ranksPerNode, impl, all.reps(), all.medianUs(), all.minUs(),
                all.maxUs(), r.roundMediansUs(), busGBs, check));
    }

    private void record(NodesMeasurement m) {
        String what = String.format(Locale.ROOT, "  %-15s %8s %-13s", m.op(), SizeList.format(m.bytes()), m.impl());
        keep(m, what + " " + (!m.timed() ? m.check() : String.format(Locale.ROOT, "%10.1f us  %7.1f GB/s bus (slowest rank per "
                + "call; min %.1f, max %.1f) check: %s", m.medianUs(), m.busBandwidthGBs(), m.minUs(), m.maxUs(), m.check())));
    }

    static String id(DType t) {
        return t.name().toLowerCase(Locale.ROOT);
    }
}

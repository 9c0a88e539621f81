package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.Seeds;
import dev.irisjvm.bench.gemm.RoundTimes;
import dev.irisjvm.bench.results.MoeMeasurement;
import dev.irisjvm.bench.rma.Lockstep;
import dev.irisjvm.bench.rma.LockstepBench;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.bench.rma.TurnsInRounds;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.moe.MoeCombine;
import dev.irisjvm.kernels.moe.MoeConfig;
import dev.irisjvm.kernels.moe.MoeDispatch;
import dev.irisjvm.kernels.moe.MoeLowLatency;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One case of the MoE sweep on this rank; every rank runs the same calls in the same order. Per
 * case: the routing ({@link MoeRouting}, uniform, from the run's seed), the tokens (uniform in
 * [-1, 1), BF16, generated on the GPU), NCCL's packed rows ({@link MoeNcclBaseline}), a {@link
 * MoeDispatch} with room for exactly the most rows an expert gets (nothing drops), its {@link
 * MoeCombine}, for small T a {@link MoeLowLatency}, and up to --layer-max-tokens the expert layer
 * ({@link MoeLayer}; with --layer-only nothing else, and no NCCL). Then:
 *
 * <ol>
 *   <li>the checks, once ({@link MoeOutputCheck}): NCCL's rows there and back, dispatch against
 *       NCCL's rows, combine of identity experts against the host's sums; the same for the
 *       low-latency mode;</li>
 *   <li>rounds: in each, every implementation of every operation (dispatch, combine, dispatch +
 *       combine; iris, iris_ll, nccl) in an order that changes every round ({@link TurnsInRounds}), each timed with
 *       {@link RepTimer} (warm-up calls, then the timed ones queued behind a gate, each preceded by
 *       an untimed device barrier of all ranks and framed by its own CUDA events). What an
 *       operation needs before it (a combine's dispatch) runs before the barrier, untimed. Per
 *       repetition the slowest rank's time counts.</li>
 * </ol>
 *
 * A failure on any rank becomes the point's check text on every rank ({@link Lockstep}).
 */
final class MoeBench extends LockstepBench<MoeMeasurement> {
    /** One implementation of one operation: the untimed work before each repetition, the timed work, and what leaves it clean. */
    private record Timed(String op, String impl, RepTimer.Rep before, RepTimer.Rep body, Runnable after) implements TurnsInRounds.Turn {}

    private final RoundsOptions timing;
    /** Whether dispatch and combine are measured against NCCL (not with --layer-only). */
    private final boolean exchange;
    private final NcclCommunicator comm;
    private final Verifier verifier;
    private final MoeOutputCheck checks;
    /** Whether the low-latency instance has a dispatch without its combine yet (its dispatches and combines alternate). */
    private boolean llPending;

    MoeBench(Iris iris, MoeOptions options, NcclCommunicator comm, RmaKernels kernels) {
        super(iris, kernels);
        this.timing = options.rounds();
        this.exchange = !options.layerOnly();
        this.comm = comm;
        this.verifier = new Verifier(iris, kernels, stream);
        this.checks = new MoeOutputCheck(iris, verifier, stream);
    }

    /** Everything about one case. */
    void run(MoeCase c) {
        MoeRouting routing = MoeRouting.uniform(c.model(), c.tokens(), world, timing.seed());
        llPending = false;
        int t = c.tokens();
        int h = c.model().hidden();
        int k = c.model().topK();
        // Whole GEMM tiles of rows: the expert layer needs them; nothing drops either way.
        int tile = Gemm.TILE_M;
        MoeConfig config = MoeConfig.of(h, c.model().experts(), k, t, (routing.capacity() + tile - 1) / tile * tile);
        long tokenSeed = Seeds.point(timing.seed(), t * 10L + c.model().ordinal(), rank);
        try (SymTensor tokens = iris.heap().uniform(tokenSeed, -1.0, 1.0, DType.BF16, t, h);
             SymTensor ids = iris.heap().empty(DType.I32, t, k);
             SymTensor weights = iris.heap().empty(DType.F32, t, k);
             SymTensor out = iris.heap().empty(DType.BF16, t, h);
             MoeNcclBaseline nccl = exchange ? MoeNcclBaseline.pack(iris, comm, routing, tokens, stream) : null;
             MoeDispatch dispatch = MoeDispatch.create(iris, config);
             MoeCombine combine = MoeCombine.create(dispatch);
             MoeLowLatency ll = c.lowLatency() ? MoeLowLatency.create(iris, config.withCapacity(1)) : null;
             MoeLayer layer = c.layer() ? MoeLayer.create(iris, dispatch, combine, Seeds.point(timing.seed(), t * 10L + 5, rank)) : null) {
            ids.copyFrom(routing.ids(rank));
            weights.copyFrom(routing.weights(rank));
            Inputs in = new Inputs(tokens, ids, weights, out);
            String irisCheck = nccl == null ? null : checkIris(in, nccl, dispatch, combine, routing);
            String llCheck = ll == null || nccl == null ? null : checkLowLatency(in, nccl, ll, routing);
            String ncclCheck = nccl == null ? null : Verifier.agree(iris, ncclRoundTrip(nccl, routing));
            String layerCheck = layer == null ? null : checkLayer(in, layer);
            List<Timed> impls = new ArrayList<>();
            if (nccl != null) {
                impls.addAll(irisImpls(in, dispatch, combine));
                impls.addAll(ncclImpls(nccl));
                if (ll != null) {
                    impls.addAll(lowLatencyImpls(in, ll));
                }
            }
            if (layer != null) {
                impls.addAll(layerImpls(in, layer));
            }
            Map<Timed, String> checkOf = new LinkedHashMap<>();
            for (Timed i : impls) {
                checkOf.put(i, MoeMeasurement.LAYER.equals(i.op()) ? layerCheck : switch (i.impl()) {
                    case MoeMeasurement.IRIS -> irisCheck;
                    case MoeMeasurement.IRIS_LL -> llCheck;
                    default -> Verifier.OK.equals(ncclCheck) ? MoeMeasurement.REFERENCE : ncclCheck;
                });
            }
            time(c, impls, checkOf);
        } catch (RuntimeException e) {
            String why = lockstep.recover(e);
            List<String> implNames = !exchange ? List.of()
                    : c.lowLatency() ? List.of(MoeMeasurement.IRIS, MoeMeasurement.NCCL, MoeMeasurement.IRIS_LL)
                    : List.of(MoeMeasurement.IRIS, MoeMeasurement.NCCL);
            for (String impl : implNames) {
                for (String op : List.of(MoeMeasurement.DISPATCH, MoeMeasurement.COMBINE, MoeMeasurement.DISPATCH_COMBINE)) {
                    record(failedPoint(c, op, impl, why));
                }
            }
            if (c.layer()) {
                for (String impl : MoeMeasurement.LAYER_IMPLS) {
                    record(failedPoint(c, MoeMeasurement.LAYER, impl, why));
                }
            }
        }
    }

    /** This rank's operands of a case. */
    private record Inputs(SymTensor tokens, SymTensor ids, SymTensor weights, SymTensor out) {}

    // ---- checks ------------------------------------------------------------------------------------

    private String checkIris(Inputs in, MoeNcclBaseline nccl, MoeDispatch d, MoeCombine combine, MoeRouting routing) {
        Lockstep.Outcome o = lockstep.everyone(
                () -> {
                    Verifier.poison(stream, d.received(), in.out(), nccl.recv(), nccl.home());
                    iris.synchronize();
                },
                () -> {
                    nccl.dispatch(stream);
                    nccl.combine(stream);
                    d.dispatch(in.tokens(), in.ids(), in.weights(), stream);
                    combine.combine(d.received(), in.out(), stream);   // identity experts: the received rows are their outputs
                    iris.synchronize(stream);
                    return null;
                },
                () -> MoeOutputCheck.joined(List.of(checks.dispatch(d, nccl, routing),
                        checks.combine("combine", in.tokens(), in.out(), routing))));
        return Verifier.agree(iris, o.check());
    }

    private String checkLowLatency(Inputs in, MoeNcclBaseline nccl, MoeLowLatency ll, MoeRouting routing) {
        Lockstep.Outcome o = lockstep.everyone(
                () -> {
                    Verifier.poison(stream, ll.received(), in.out());
                    iris.synchronize();
                },
                () -> {
                    ll.dispatch(in.tokens(), in.ids(), in.weights(), stream);
                    ll.combine(ll.received(), in.out(), stream);
                    iris.synchronize(stream);
                    return null;
                },
                () -> MoeOutputCheck.joined(List.of(checks.lowLatency(ll, nccl, routing),
                        checks.combine("low-latency combine", in.tokens(), in.out(), routing))));
        return Verifier.agree(iris, o.check());
    }

    private String checkLayer(Inputs in, MoeLayer layer) {
        // The three ways run inside the check: each output is compared as soon as it is there.
        Lockstep.Outcome o = lockstep.everyone(null, () -> null,
                () -> layer.check(in.tokens(), in.ids(), in.weights(), in.out(), verifier, stream));
        return Verifier.agree(iris, o.check());
    }

    /** NCCL's rows after the check's round trip (local: a failure here is this rank's text, not an exception). */
    private String ncclRoundTrip(MoeNcclBaseline nccl, MoeRouting routing) {
        try {
            return checks.ncclRoundTrip(nccl, routing);
        } catch (RuntimeException e) {
            return "rank " + rank + ": NCCL's round trip could not be checked: " + Lockstep.oneLine(e);
        }
    }

    // ---- the implementations -------------------------------------------------------------------------

    private List<Timed> irisImpls(Inputs in, MoeDispatch d, MoeCombine c) {
        Runnable dispatch = () -> d.dispatch(in.tokens(), in.ids(), in.weights(), stream);
        Runnable combine = () -> c.combine(d.received(), in.out(), stream);
        return List.of(
                new Timed(MoeMeasurement.DISPATCH, MoeMeasurement.IRIS, r -> barrier(), r -> dispatch.run(), () -> {}),
                new Timed(MoeMeasurement.COMBINE, MoeMeasurement.IRIS, r -> {
                    dispatch.run();
                    barrier();
                }, r -> combine.run(), () -> {}),
                new Timed(MoeMeasurement.DISPATCH_COMBINE, MoeMeasurement.IRIS, r -> barrier(), r -> {
                    dispatch.run();
                    combine.run();
                }, () -> {}));
    }

    /** The expert layer three ways: in sequence (the baseline), with combine as the GEMM's epilogue, and fed by the dispatch. */
    private List<Timed> layerImpls(Inputs in, MoeLayer layer) {
        return List.of(
                new Timed(MoeMeasurement.LAYER, MoeMeasurement.IRIS, r -> barrier(),
                        r -> layer.sequence(in.tokens(), in.ids(), in.weights(), in.out(), stream), () -> {}),
                new Timed(MoeMeasurement.LAYER, MoeMeasurement.IRIS_FUSED, r -> barrier(),
                        r -> layer.fused(in.tokens(), in.ids(), in.weights(), in.out(), stream), () -> {}),
                new Timed(MoeMeasurement.LAYER, MoeMeasurement.IRIS_FED, r -> barrier(),
                        r -> layer.fed(in.tokens(), in.ids(), in.weights(), in.out(), stream), () -> {}));
    }

    private List<Timed> ncclImpls(MoeNcclBaseline nccl) {
        return List.of(
                new Timed(MoeMeasurement.DISPATCH, MoeMeasurement.NCCL, r -> barrier(), r -> nccl.dispatch(stream), () -> {}),
                new Timed(MoeMeasurement.COMBINE, MoeMeasurement.NCCL, r -> {
                    nccl.dispatch(stream);
                    barrier();
                }, r -> nccl.combine(stream), () -> {}),
                new Timed(MoeMeasurement.DISPATCH_COMBINE, MoeMeasurement.NCCL, r -> barrier(), r -> {
                    nccl.dispatch(stream);
                    nccl.combine(stream);
                }, () -> {}));
    }

    /** The low-latency mode's dispatches and combines alternate: a dispatch timed alone has its combine before the next barrier. */
    private List<Timed> lowLatencyImpls(Inputs in, MoeLowLatency ll) {
        Runnable dispatch = () -> {
            ll.dispatch(in.tokens(), in.ids(), in.weights(), stream);
            llPending = true;
        };
        Runnable combine = () -> {
            ll.combine(ll.received(), in.out(), stream);
            llPending = false;
        };
        Runnable settle = () -> {
            if (llPending) {
                combine.run();
                iris.synchronize(stream);
            }
        };
        return List.of(
                new Timed(MoeMeasurement.DISPATCH, MoeMeasurement.IRIS_LL, r -> {
                    if (llPending) combine.run();
                    barrier();
                }, r -> dispatch.run(), settle),
                new Timed(MoeMeasurement.COMBINE, MoeMeasurement.IRIS_LL, r -> {
                    dispatch.run();
                    barrier();
                }, r -> combine.run(), settle),
                new Timed(MoeMeasurement.DISPATCH_COMBINE, MoeMeasurement.IRIS_LL, r -> barrier(), r -> {
                    dispatch.run();
                    combine.run();
                }, settle));
    }

    private void barrier() {
        iris.barrier(stream);
    }

    // ---- timing ------------------------------------------------------------------------------------

    private void time(MoeCase c, List<Timed> impls, Map<Timed, String> checkOf) {
        TurnsInRounds.Outcome<Timed> turns = TurnsInRounds.time(iris, lockstep, timer, impls, timing.rounds(), timing.warmup(),
                timing.reps());
        Map<Timed, String> failed = turns.failures();
        Map<Timed, RoundTimes> times = turns.times();
        for (Timed i : impls) {
            if (failed.containsKey(i)) {
                record(failedPoint(c, i.op(), i.impl(), failed.get(i)));
            } else {
                RoundTimes r = times.get(i);
                TimingStats all = r.all();
                record(new MoeMeasurement(c.model().id(), c.tokens(), c.model().hidden(), c.model().experts(), c.model().topK(), world,
                        i.op(), i.impl(), all.reps(), all.medianUs(), all.minUs(), all.maxUs(), r.roundMediansUs(), c.bytesPerRank(),
                        checkOf.get(i)));
            }
        }
    }

    private MoeMeasurement failedPoint(MoeCase c, String op, String impl, String why) {
        return MoeMeasurement.failed(c.model().id(), c.tokens(), c.model().hidden(), c.model().experts(), c.model().topK(), world, op,
                impl, why);
    }

    private void record(MoeMeasurement m) {
        String what = String.format(Locale.ROOT, "  %-12s T=%-6d %-17s %-8s", m.model(), m.tokens(), m.op(), m.impl());
        keep(m, what + " " + (!m.timed() ? m.check() : String.format(Locale.ROOT, "%10.1f us (slowest rank per rep; min %.1f, max %.1f) "
                + "check: %s", m.medianUs(), m.minUs(), m.maxUs(), m.check())));
    }

    /** Collective: frees the verifier's buffer and the timer's events. */
    @Override
    public void close() {
        verifier.close();
        super.close();
    }
}

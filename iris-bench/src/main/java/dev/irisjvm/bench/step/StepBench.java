package dev.irisjvm.bench.step;

import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.gemm.RoundTimes;
import dev.irisjvm.bench.results.StepMeasurement;
import dev.irisjvm.bench.rma.Lockstep;
import dev.irisjvm.bench.rma.LockstepBench;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.bench.rma.TurnsInRounds;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;

/**
 * The training-step benchmark on this rank; every rank runs the same calls in the same order.
 * On one {@link StepWorkload}:
 *
 * <ol>
 *   <li>rounds: in each, {@code fused} (the step with the fused operations), {@code baseline} (cuBLAS
 *       then NCCL), and the baseline's parts alone ({@code cublas_gemms}, {@code nccl}) and the
 *       library's GEMMs alone ({@code iris_gemms}), in an order that changes every round ({@link TurnsInRounds}), each
 *       timed with {@link RepTimer} (warm-up steps, then the timed ones queued behind a gate, each
 *       preceded by an untimed device barrier of all ranks and framed by its own CUDA events). Per
 *       step the slowest rank's time counts;</li>
 *   <li>the check, once, after the timing: a baseline step and a fused step from the same inputs,
 *       each into poisoned outputs with zeroed gradients ({@link StepOutputCheck}).</li>
 * </ol>
 *
 * A failure on any rank becomes the point's check text on every rank ({@link Lockstep}).
 */
final class StepBench extends LockstepBench<StepMeasurement> {
    private record Timed(String impl, RepTimer.Rep before, RepTimer.Rep body) implements TurnsInRounds.Turn {}

    private final StepOptions options;
    private final RoundsOptions timing;
    private final Gemm gemm;
    private final CublasGemm cublas;
    private final NcclComm nccl;

    StepBench(Iris iris, StepOptions options, Gemm gemm, CublasGemm cublas, NcclComm nccl, RmaKernels kernels) {
        super(iris, kernels);
        this.options = options;
        this.timing = options.rounds();
        this.gemm = gemm;
        this.cublas = cublas;
        this.nccl = nccl;
    }

    /** Everything about one shape. */
    void run(StepShape s, DeviceModule elementwise) {
        String unsplittable = s.unsplittable(world);
        if (unsplittable != null) {
            notRun(s, unsplittable);
            return;
        }
        try (StepWorkload w = new StepWorkload(iris, s, elementwise, timing.seed())) {
            List<Timed> impls = List.of(
                    timed(StepMeasurement.FUSED, () -> w.fused(gemm)),
                    timed(StepMeasurement.BASELINE, () -> w.baseline(cublas, nccl)),
                    timed(StepMeasurement.CUBLAS_GEMMS, () -> w.cublasGemms(cublas)),
                    timed(StepMeasurement.IRIS_GEMMS, () -> w.irisGemms(gemm)),
                    timed(StepMeasurement.NCCL, () -> w.collectives(nccl)));
            TurnsInRounds.Outcome<Timed> turns = TurnsInRounds.time(iris, lockstep, timer, impls, timing.rounds(), timing.warmup(),
                    timing.reps());
            String fusedCheck = Verifier.agree(iris, lockstep.everyone(null, () -> null, () -> check(w)).check());
            for (Timed i : impls) {
                String failure = turns.failures().get(i);
                String check = failure != null ? StepMeasurement.NOT_RUN + failure : switch (i.impl()) {
                    case StepMeasurement.FUSED -> fusedCheck;
                    case StepMeasurement.BASELINE -> StepMeasurement.REFERENCE;
                    default -> "";
                };
                record(s, i.impl(), turns.times().get(i), check);
            }
        } catch (RuntimeException e) {
            notRun(s, lockstep.recover(e));
        }
    }

    private void notRun(StepShape s, String why) {
        for (String impl : List.of(StepMeasurement.FUSED, StepMeasurement.BASELINE, StepMeasurement.CUBLAS_GEMMS,
                StepMeasurement.IRIS_GEMMS, StepMeasurement.NCCL)) {
            record(StepMeasurement.failed(s.tokens(), s.hidden(), s.ffn(), world, impl, why));
        }
    }

    /** A step that takes its turns after an untimed device barrier of all ranks. */
    private Timed timed(String impl, Runnable step) {
        return new Timed(impl, r -> iris.barrier(stream), r -> step.run());
    }

    /** The baseline's step, then the fused step, from the same inputs into poisoned outputs: "ok" or what differs. */
    private String check(StepWorkload w) {
        w.poison();
        iris.synchronize();
        iris.hostBarrier();  // every rank poisoned before any peer stores into its tensors
        w.baseline(cublas, nccl);
        iris.synchronize();
        ByteBuffer[] reference = StepOutputCheck.download(w.outputs());
        iris.hostBarrier();
        w.poison();
        iris.synchronize();
        iris.hostBarrier();
        w.fused(gemm);
        iris.synchronize();
        String mine = StepOutputCheck.compare(StepOutputCheck.download(w.outputs()), reference);
        return Verifier.OK.equals(mine) ? mine : "rank " + rank + ": " + mine;
    }

    private void record(StepShape s, String impl, RoundTimes r, String check) {
        if (r == null) {
            record(StepMeasurement.failed(s.tokens(), s.hidden(), s.ffn(), world, impl, check.isEmpty() ? "nothing timed" : check));
            return;
        }
        TimingStats all = r.all();
        record(new StepMeasurement(s.tokens(), s.hidden(), s.ffn(), world, impl, all.reps(), all.medianUs(), all.minUs(), all.maxUs(),
                r.roundMediansUs(), s.flopsPerRank(world), s.commBytesPerRank(world), check));
    }

    private void record(StepMeasurement m) {
        String what = String.format(Locale.ROOT, "  %-18s %-13s", m.tokens() + "x" + m.hidden() + "x" + m.ffn(), m.impl());
        keep(m, what + " " + (!m.timed() ? m.check() : String.format(Locale.ROOT, "%10.1f us (slowest rank per step; min %.1f, max %.1f)%s",
                m.medianUs(), m.minUs(), m.maxUs(), m.check().isEmpty() ? "" : " check: " + m.check())));
    }
}

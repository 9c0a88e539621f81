package dev.irisjvm.bench.rma;

import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.bench.rma.RmaKernels.AtomicOp;

/**
 * Remote atomics: atomic_add (uint64 +1, result unused), atomic_add_f32 (+1.0f, result unused),
 * atomic_xchg and atomic_cas (uint64, results checked), all relaxed at system scope. A size of B
 * bytes means B / 8 operations per launch on as many distinct slots of the peer, so consecutive
 * threads hit consecutive slots. The issuer first writes each slot's starting value into the peer;
 * after warm-up and timed launches every slot must hold start + launches, and no fetch may have
 * returned a value other than the one the previous launch left.
 *
 * <pre>{@code
 * new AtomicBench(ctx).run(RmaOp.ATOMIC_CAS);
 * }</pre>
 */
public final class AtomicBench {
    private final SweepContext ctx;
    private final RmaKernels kernels;
    private final SweepOptions options;

    public AtomicBench(SweepContext ctx) {
        this.ctx = ctx;
        this.kernels = ctx.kernels();
        this.options = ctx.options();
    }

    static AtomicOp kernelOp(RmaOp op) {
        return switch (op) {
            case ATOMIC_ADD -> AtomicOp.ADD_U64;
            case ATOMIC_ADD_F32 -> AtomicOp.ADD_F32;
            case ATOMIC_XCHG -> AtomicOp.XCHG_U64;
            case ATOMIC_CAS -> AtomicOp.CAS_U64;
            default -> throw new IllegalArgumentException("not an atomic op: " + op);
        };
    }

    public void run(RmaOp op) {
        AtomicOp kind = kernelOp(op);
        for (long bytes : options.sizes()) {
            long ops = bytes / 8;
            if (ops < 1) {
                continue;
            }
            int reps = options.repsFor(bytes);
            long launches = options.warmup() + reps;
            LaunchShape shape = kernels.atomicShape(ops, options.atomicBlocks, options.atomicThreads);
            try (SymTensor slots = ctx.counters(ops); SymTensor failures = ctx.counters(1)) {
                ctx.forEachPair((i, j) -> {
                    int peer = j;
                    long number = ctx.nextPoint();
                    long seed = ctx.seed(number, i);
                    Lockstep.Outcome o = ctx.lockstep().pair(i, j, false,
                            () -> {
                                ctx.zero(failures);
                                ctx.iris().synchronize();
                            },
                            () -> {
                                kernels.atomicInit(kind, slots, ops, seed, peer, ctx.stream());
                                return ctx.timer().run(options.warmup(), reps, r -> {},
                                        r -> kernels.atomic(kind, slots, ops, seed, r + 1L, peer, failures.deviceAddress(),
                                                shape, ctx.stream()), true);
                            },
                            null,
                            () -> {
                                String c = ctx.verifier().atomicSlots(kind, slots, ops, seed, launches, peer);
                                long failed = Verifier.counter(failures);
                                if (failed != 0) {
                                    String f = failed + " fetch results differed from the value the previous launch left";
                                    c = Verifier.OK.equals(c) ? f : c + "; " + f;
                                }
                                return c;
                            });
                    if (o != null) {
                        ctx.record(number, Points.atomics(op.id(), ops, i, j, o));
                    }
                });
            }
        }
    }
}

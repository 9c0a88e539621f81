package dev.irisjvm.bench.rma;

import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.ccl.ReduceOp;

/**
 * NCCL baselines in the same run: send_recv (ncclSend / ncclRecv of bytes between each ordered
 * pair, timed on the sender's stream) and all_reduce (bf16 sum over all ranks, each rank timing its
 * own call). NCCL is opened on first use; if it is unavailable, one measurement per op records why.
 *
 * <pre>{@code
 * try (NcclBench bench = new NcclBench(ctx)) {
 *     bench.run(RmaOp.ALL_REDUCE);
 * }
 * }</pre>
 */
public final class NcclBench implements AutoCloseable {
    private final SweepContext ctx;
    private final SweepOptions options;
    private final int rank;
    private NcclComm nccl;

    public NcclBench(SweepContext ctx) {
        this.ctx = ctx;
        this.options = ctx.options();
        this.rank = ctx.rank();
    }

    /** The communicator, opened (collectively) on first use. */
    public NcclComm nccl() {
        if (nccl == null) {
            nccl = NcclComm.open(ctx.iris());
            if (!nccl.available() && rank == 0) {
                System.out.println("rank 0: nccl unavailable: " + nccl.reason());
            }
        }
        return nccl;
    }

    /** The version of the NCCL this sweep opened, or null if it opened none (or could not load it). */
    public String openedVersion() {
        return nccl == null ? null : nccl.version();
    }

    public void run(RmaOp op) {
        NcclComm n = nccl();
        if (!n.available()) {
            long number = ctx.nextPoint();
            if (rank == 0) {
                ctx.record(number, Points.failed(op.id(), "nccl", 0, 0, -1, "nccl unavailable: " + n.reason()));
            }
            return;
        }
        for (long bytes : options.sizes()) {
            switch (op) {
                case SEND_RECV -> sendRecv(n, bytes);
                case ALL_REDUCE -> allReduce(n, bytes);
                default -> throw new IllegalArgumentException("not an NCCL op: " + op);
            }
        }
    }

    private void sendRecv(NcclComm n, long bytes) {
        int reps = options.repsFor(bytes);
        try (SymTensor src = ctx.freshData(bytes); SymTensor dst = ctx.buffer(bytes)) {
            ctx.forEachPair((i, j) -> {
                int sender = i;
                int receiver = j;
                long number = ctx.nextPoint();
                try (SymTensor flags = ctx.counters(DeviceContext.MAX_RANKS)) {
                    long[] meetings = {0};
                    Lockstep.Outcome o = ctx.lockstep().pair(i, j, true,
                            () -> {
                                ctx.poison(dst);
                                ctx.iris().synchronize();
                            },
                            () -> ctx.timer().run(options.warmup(), reps,
                                    r -> ctx.kernels().pairSync(flags, ++meetings[0], receiver, ctx.stream()),
                                    r -> n.send(src.deviceAddress(), bytes, receiver, ctx.stream()), true),
                            () -> ctx.timer().run(options.warmup(), reps,
                                    r -> ctx.kernels().pairSync(flags, ++meetings[0], sender, ctx.stream()),
                                    r -> n.recv(dst.deviceAddress(), bytes, sender, ctx.stream()), false),
                            () -> ctx.verifier().sameBytes(src.deviceAddress(), dst.deviceAddress(receiver), bytes,
                                    "rank " + receiver + "'s received bytes vs src"));
                    if (o != null) {
                        ctx.record(number, Points.bandwidth("send_recv", "nccl", bytes, i, j, o));
                    }
                }
            });
        }
    }

    private void allReduce(NcclComm n, long bytes) {
        long count = bytes / 2;
        if (count < 1) {
            return;
        }
        int reps = options.repsFor(bytes);
        long number = ctx.nextPoint();
        try (SymTensor in = ctx.iris().heap().uniform(ctx.seed(number, rank), -1.0, 1.0, DType.BF16, count);
             SymTensor out = ctx.buffer(count * 2)) {
            Lockstep.Outcome o = ctx.lockstep().everyone(
                    () -> {
                        ctx.poison(out);
                        ctx.iris().synchronize();
                    },
                    () -> ctx.timer().run(options.warmup(), reps, r -> ctx.iris().barrier(ctx.stream()),
                            r -> n.allReduce(in.deviceAddress(), out.deviceAddress(), count, DType.BF16, ReduceOp.SUM,
                                    ctx.stream()), true),
                    () -> ctx.verifier().allReduceBf16(in, out.deviceAddress(), count));
            Measurement m = Points.bandwidth("all_reduce", "nccl", count * 2, rank, -1, o);
            ctx.record(number, m);
        }
    }

    /** Destroys the communicator if one was opened (collective when it was). */
    @Override
    public void close() {
        if (nccl != null) {
            ctx.iris().synchronize();
            nccl.close();
        }
    }
}

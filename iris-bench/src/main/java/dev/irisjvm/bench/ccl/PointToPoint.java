package dev.irisjvm.bench.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.baselines.NcclComm;
import java.util.Optional;

/**
 * A collective that only moves data, as one NCCL group of {@code ncclSend} / {@code ncclRecv}: the
 * same bytes into the same output as NCCL's collective, by the way NCCL moves an all-to-all (at
 * 1 GiB on two H200s its all-to-all took 1614 µs where its all-gather of the same bytes took 1981).
 * The sweep times it as a third NCCL baseline ({@code nccl_p2p}), so each size is judged against
 * NCCL's fastest way. Counts and offsets are in elements.
 *
 * <pre>{@code
 * PointToPoint.of(CclOp.ALL_GATHER, inCount, world, rank, root)
 *         .ifPresent(p -> p.enqueue(nccl, in, out, DType.BF16, stream));
 * }</pre>
 *
 * @param sendCounts   elements to each rank (0: none)
 * @param sendOffsets  where in the input each rank's elements start
 * @param recvCounts   elements from each rank (0: none)
 * @param recvOffsets  where in the output each rank's elements go
 */
record PointToPoint(long[] sendCounts, long[] sendOffsets, long[] recvCounts, long[] recvOffsets) {

    /**
     * All-gather: every rank sends its {@code inCount} elements to every rank, itself included, and
     * receives rank r's into block r. Broadcast: the root sends its {@code inCount} elements to every
     * other rank, which receives them in place. Other ops reduce, or are NCCL's send/receive already
     * (all-to-all): empty.
     */
    static Optional<PointToPoint> of(CclOp op, long inCount, int world, int rank, int root) {
        long[] sendCounts = new long[world];
        long[] sendOffsets = new long[world];
        long[] recvCounts = new long[world];
        long[] recvOffsets = new long[world];
        switch (op) {
            case ALL_GATHER -> {
                for (int p = 0; p < world; p++) {
                    sendCounts[p] = inCount;
                    recvCounts[p] = inCount;
                    recvOffsets[p] = p * inCount;
                }
            }
            case BROADCAST -> {
                for (int p = 0; p < world; p++) {
                    if (rank == root && p != root) {
                        sendCounts[p] = inCount;
                    }
                }
                if (rank != root) {
                    recvCounts[root] = inCount;
                }
            }
            default -> {
                return Optional.empty();
            }
        }
        return Optional.of(new PointToPoint(sendCounts, sendOffsets, recvCounts, recvOffsets));
    }

    /** Enqueues the group: from {@code in}, into {@code out} (broadcast: the same buffer). */
    void enqueue(NcclComm nccl, long in, long out, DType type, Stream stream) {
        nccl.allToAllV(in, sendCounts, sendOffsets, out, recvCounts, recvOffsets, type, stream);
    }
}

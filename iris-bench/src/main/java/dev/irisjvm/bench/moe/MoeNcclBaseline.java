package dev.irisjvm.bench.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.nccl.NcclCommunicator;

/**
 * The MoE token exchange as a JVM user without this library runs it (as the GPU test's
 * {@code MoeNcclPath} does): this rank's route rows packed per destination rank in route order,
 * counts known on the host, one NCCL all-to-all-v (a group of ncclSend/ncclRecv) to the experts'
 * ranks and the same back. Packing happens once, untimed; {@link #dispatch} and {@link #combine}
 * enqueue the transfers alone. There is no weighted-sum kernel to add after the return transfer,
 * so {@link #combine} is the transfer alone, which favours NCCL.
 *
 * <pre>{@code
 * try (MoeNcclBaseline nccl = MoeNcclBaseline.pack(iris, comm, routing, tokens, stream)) {
 *     nccl.dispatch(stream);   // rows from rank s land at recvRow(s, j), in s's route order
 *     nccl.combine(stream);    // and come back into home(), where send() had them
 * }
 * }</pre>
 */
final class MoeNcclBaseline implements AutoCloseable {
    private final NcclCommunicator comm;
    private final int hidden;
    private final SymTensor send;
    private final SymTensor recv;
    private final SymTensor home;
    private final long[] sendOffsets;
    private final long[] sendCounts;
    private final long[] recvOffsets;
    private final long[] recvCounts;

    private MoeNcclBaseline(NcclCommunicator comm, int hidden, SymTensor send, SymTensor recv, SymTensor home, long[] sendRows,
                            long[] recvRows) {
        this.comm = comm;
        this.hidden = hidden;
        this.send = send;
        this.recv = recv;
        this.home = home;
        this.sendOffsets = offsets(sendRows, hidden);
        this.sendCounts = scaled(sendRows, hidden);
        this.recvOffsets = offsets(recvRows, hidden);
        this.recvCounts = scaled(recvRows, hidden);
    }

    /** Collective (heap allocations of the same size on every rank): allocates the buffers and packs this rank's rows. */
    static MoeNcclBaseline pack(Iris iris, NcclCommunicator comm, MoeRouting routing, SymTensor tokens, Stream stream) {
        int rank = iris.rank();
        int hidden = routing.model().hidden();
        int topK = routing.model().topK();
        long routeRows = Math.max(1, (long) routing.tokens() * topK);
        SymTensor send = null, recv = null, home = null;
        try {
            send = iris.heap().empty(DType.BF16, routeRows, hidden);
            recv = iris.heap().empty(DType.BF16, Math.max(1, routing.maxRecvRows()), hidden);
            home = iris.heap().empty(DType.BF16, routeRows, hidden);
            long rowBytes = 2L * hidden;
            long at = 0;
            for (int p = 0; p < routing.world(); p++) {
                for (int route : routing.routesTo(rank, p)) {
                    Memcpy.deviceToDevice(send.deviceAddress() + at++ * rowBytes, tokens.deviceAddress() + (long) (route / topK) * rowBytes,
                            rowBytes, stream);
                }
            }
            iris.synchronize(stream);
            return new MoeNcclBaseline(comm, hidden, send, recv, home, routing.sendRows(rank), routing.recvRows(rank));
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, home, recv, send);
            throw e;
        }
    }

    /** The route rows to the experts' ranks. */
    void dispatch(Stream stream) {
        comm.sendRecv(send.deviceAddress(), sendOffsets, sendCounts, recv.deviceAddress(), recvOffsets, recvCounts, DType.BF16, stream);
    }

    /** The received rows back to their ranks (the return transfer; no weighted sum). */
    void combine(Stream stream) {
        comm.sendRecv(recv.deviceAddress(), recvOffsets, recvCounts, home.deviceAddress(), sendOffsets, sendCounts, DType.BF16, stream);
    }

    /** The packed rows, BF16 [T topK, hidden]: per destination rank, its routes in route order. */
    SymTensor send() {
        return send;
    }

    /** Where {@link #dispatch} delivers. */
    SymTensor recv() {
        return recv;
    }

    /** Where {@link #combine} delivers: the same layout as {@link #send()}. */
    SymTensor home() {
        return home;
    }

    /** The device address of row {@code j} received from rank {@code source}. */
    long recvRow(int source, long j) {
        return recv.deviceAddress() + (recvOffsets[source] + j * hidden) * 2;
    }

    private static long[] scaled(long[] rows, int hidden) {
        long[] out = new long[rows.length];
        for (int p = 0; p < rows.length; p++) out[p] = rows[p] * hidden;
        return out;
    }

    private static long[] offsets(long[] rows, int hidden) {
        long[] at = new long[rows.length];
        for (int p = 1; p < rows.length; p++) at[p] = at[p - 1] + rows[p - 1] * hidden;
        return at;
    }

    /** Collective: frees the buffers. */
    @Override
    public void close() {
        Resources.closeAll(home, recv, send);
    }
}

package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.moe.MoeScenarios.Inputs;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An MoE layer as a JVM user without this library runs it, for the scenario
 * {@code moe_vs_nccl_all_to_all_v}: every rank sends each route's token to the rank of its expert
 * by NCCL all-to-all-v (one group of ncclSend/ncclRecv), regroups what it received by local
 * expert, runs each expert's GEMM, sends the outputs home by a second all-to-all-v, and weighs
 * them there. The counts come from the host, which knows every rank's routing; a real job would
 * exchange them first.
 *
 * <p>Received rows are grouped in the order {@link MoeDispatch} documents (source rank, then
 * route), so on the same routing the experts' inputs, and with the same GEMM their outputs, must
 * equal the library's bit for bit.
 */
final class MoeNcclPath {
    private MoeNcclPath() {}

    /**
     * What the path computed on this rank.
     *
     * @param expertInputs  [local expert]: its rows in order, bf16 bits, count x hidden
     * @param expertOutputs [local expert]: its GEMM's rows, the same shape
     * @param home          [route]: the output row that came back for this rank's route, or null
     *                      for a route to no expert
     */
    record Result(short[][] expertInputs, short[][] expertOutputs, short[][] home) {}

    /**
     * Runs the path for this rank ({@code rank} of {@code in.length}) and waits for it.
     *
     * @param weights [localExperts, hidden, hidden] bf16: each local expert's weight, N x K, so
     *                that an expert computes y = x W^T
     */
    static Result run(SymmetricHeap heap, NcclCommunicator comm, Gemm gemm, SymTensor weights, Inputs[] in, int rank, int experts,
                      int topK, int hidden, int maxTokens, Stream stream) {
        int world = in.length;
        int local = experts / world;
        Inputs mine = in[rank];
        // To each rank p, this rank's routes to p's experts in route order.
        List<List<Integer>> outgoing = new ArrayList<>();
        for (int p = 0; p < world; p++) outgoing.add(new ArrayList<>());
        for (int i = 0; i < mine.ids().length; i++) {
            int e = mine.ids()[i];
            if (e >= 0 && e < experts) outgoing.get(e / local).add(i);
        }
        // From each rank s, its routes to this rank's experts in route order.
        List<List<Integer>> incoming = new ArrayList<>();
        for (int s = 0; s < world; s++) {
            List<Integer> routes = new ArrayList<>();
            for (int i = 0; i < in[s].ids().length; i++) {
                int e = in[s].ids()[i];
                if (e >= rank * local && e < (rank + 1) * local) routes.add(i);
            }
            incoming.add(routes);
        }
        long[] sendRows = counts(outgoing);
        long[] recvRows = counts(incoming);
        long sendTotal = Arrays.stream(sendRows).sum();
        long recvTotal = Arrays.stream(recvRows).sum();
        // Same sizes on every rank: heap allocation is collective.
        int routeRows = Math.max(1, maxTokens * topK);
        int gatherRows = Math.max(1, world * maxTokens * topK);
        try (SymTensor toExperts = heap.empty(DType.BF16, routeRows, hidden);
             SymTensor atExperts = heap.empty(DType.BF16, gatherRows, hidden);
             SymTensor grouped = heap.empty(DType.BF16, local, gatherRows, hidden);
             SymTensor produced = heap.empty(DType.BF16, local, gatherRows, hidden);
             SymTensor toHome = heap.empty(DType.BF16, gatherRows, hidden);
             SymTensor atHome = heap.empty(DType.BF16, routeRows, hidden)) {
            short[] send = poisonRows(routeRows, hidden);
            int at = 0;
            for (List<Integer> routes : outgoing) {
                for (int i : routes) {
                    System.arraycopy(mine.x(), i / topK * hidden, send, at++ * hidden, hidden);
                }
            }
            toExperts.copyFrom(MoeScenarios.shorts(send));
            short[] received = allToAllV(comm, toExperts, sendRows, atExperts, recvRows, hidden, stream);

            // Regroup by local expert, in (source rank, route) order.
            short[][] inputs = new short[local][];
            int[][] slot = new int[world][];   // [s][j]: the row of incoming route j of rank s in its expert
            List<List<short[]>> byExpert = new ArrayList<>();
            for (int l = 0; l < local; l++) byExpert.add(new ArrayList<>());
            int row = 0;
            for (int s = 0; s < world; s++) {
                slot[s] = new int[incoming.get(s).size()];
                for (int j = 0; j < slot[s].length; j++, row++) {
                    int l = in[s].ids()[incoming.get(s).get(j)] - rank * local;
                    slot[s][j] = byExpert.get(l).size();
                    byExpert.get(l).add(Arrays.copyOfRange(received, row * hidden, (row + 1) * hidden));
                }
            }
            short[] groupedBits = poisonRows(local * gatherRows, hidden);
            for (int l = 0; l < local; l++) {
                inputs[l] = new short[byExpert.get(l).size() * hidden];
                for (int j = 0; j < byExpert.get(l).size(); j++) {
                    System.arraycopy(byExpert.get(l).get(j), 0, inputs[l], j * hidden, hidden);
                }
                System.arraycopy(inputs[l], 0, groupedBits, l * gatherRows * hidden, inputs[l].length);
            }
            grouped.copyFrom(MoeScenarios.shorts(groupedBits));
            poison(produced, stream);
            long expertBytes = (long) gatherRows * hidden * 2;
            long weightBytes = (long) hidden * hidden * 2;
            for (int l = 0; l < local; l++) {
                int rows = byExpert.get(l).size();
                if (rows == 0) continue;
                gemm.matmul(new DeviceMatrix(grouped.deviceAddress() + l * expertBytes, DType.BF16, rows, hidden, hidden),
                        DeviceMatrix.contiguous(weights.deviceAddress() + l * weightBytes, DType.BF16, hidden, hidden), GemmLayout.NK, 0,
                        new DeviceMatrix(produced.deviceAddress() + l * expertBytes, DType.BF16, rows, hidden, hidden), stream);
            }
            stream.synchronize();
            short[] producedBits = MoeScenarios.bits(produced);
            short[][] outputs = new short[local][];
            for (int l = 0; l < local; l++) {
                int from = l * gatherRows * hidden;
                outputs[l] = Arrays.copyOfRange(producedBits, from, from + inputs[l].length);
            }

            // Home: the rows go back in the order they came.
            short[] back = poisonRows(gatherRows, hidden);
            row = 0;
            for (int s = 0; s < world; s++) {
                for (int j = 0; j < slot[s].length; j++, row++) {
                    int l = in[s].ids()[incoming.get(s).get(j)] - rank * local;
                    System.arraycopy(outputs[l], slot[s][j] * hidden, back, row * hidden, hidden);
                }
            }
            toHome.copyFrom(MoeScenarios.shorts(back));
            short[] returned = allToAllV(comm, toHome, recvRows, atHome, sendRows, hidden, stream);
            short[][] home = new short[mine.ids().length][];
            at = 0;
            for (List<Integer> routes : outgoing) {
                for (int i : routes) {
                    home[i] = Arrays.copyOfRange(returned, at * hidden, (at + 1) * hidden);
                    at++;
                }
            }
            if (at != sendTotal || row != recvTotal) {
                throw new IllegalStateException("rank " + rank + ": sent " + at + " and received " + row + " rows; the counts said "
                        + sendTotal + " and " + recvTotal);
            }
            return new Result(inputs, outputs, home);
        }
    }

    /** Rows {@code from} to each rank, {@code to} from each, packed in rank order; returns what arrived (poison elsewhere), waited for. */
    private static short[] allToAllV(NcclCommunicator comm, SymTensor from, long[] sendRows, SymTensor to, long[] recvRows, int hidden,
                                     Stream stream) {
        poison(to, stream);
        comm.sendRecv(from.deviceAddress(), offsets(sendRows, hidden), scale(sendRows, hidden), to.deviceAddress(),
                offsets(recvRows, hidden), scale(recvRows, hidden), DType.BF16, stream);
        stream.synchronize();
        return MoeScenarios.bits(to);
    }

    private static long[] counts(List<List<Integer>> routesPerRank) {
        return routesPerRank.stream().mapToLong(List::size).toArray();
    }

    private static long[] scale(long[] rows, int hidden) {
        return Arrays.stream(rows).map(r -> r * hidden).toArray();
    }

    private static long[] offsets(long[] rows, int hidden) {
        long[] at = new long[rows.length];
        for (int p = 1; p < rows.length; p++) at[p] = at[p - 1] + rows[p - 1] * hidden;
        return at;
    }

    /** Bytes 0xFF (NaN rows) in what NCCL or the GEMM must write. */
    private static void poison(SymTensor t, Stream stream) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
    }

    private static short[] poisonRows(int rows, int hidden) {
        short[] bits = new short[rows * hidden];
        Arrays.fill(bits, (short) -1);
        return bits;
    }
}

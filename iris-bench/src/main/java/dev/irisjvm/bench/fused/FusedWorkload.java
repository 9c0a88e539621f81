package dev.irisjvm.bench.fused;

import dev.irisjvm.bench.Seeds;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.baselines.NcclWindows;
import dev.irisjvm.kernels.baselines.RowMajorGemm;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.fused.AllGatherGemm;
import dev.irisjvm.kernels.fused.FusedConfig;
import dev.irisjvm.kernels.fused.FusedGemm;
import dev.irisjvm.kernels.fused.FusedOp;
import dev.irisjvm.kernels.fused.GemmAllReduce;
import dev.irisjvm.kernels.fused.GemmAllScatter;
import dev.irisjvm.kernels.fused.GemmReduceScatter;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One shape's tensors on this rank and the calls the fused benchmarks time on them: the fused
 * kernel, the rank's GEMM (a vendor GEMM or the Iris GEMM), the collective (NCCL's or the
 * library's own), and the GEMM and a collective in sequence (the baselines). BF16, B stored N x K (a Linear layer's weight), inputs uniform in [-1, 1)
 * generated on the GPU: A replicated for all-scatter (the same seed on every rank), every other
 * operand a shard of its own. Allocation is collective.
 *
 * <pre>{@code
 * try (FusedWorkload w = FusedWorkload.allocate(iris, FusedShape.parse(FusedOp.ALL_REDUCE, "4096x4096x4096"), seed);
 *      FusedGemm g = w.create(FusedConfig.defaults())) {
 *     w.fused(g);                    // the fused kernel into fusedOutput()
 *     w.baseline(cublas, nccl);      // cuBLAS then NCCL into baselineOutput()
 *     w.baselineIris(cublas, ccl);   // cuBLAS then the library's collective into baselineIrisOutput()
 *     w.baselineWindow(cublas, nccl, windows);  // the same through NCCL's registered windows
 * }
 * }</pre>
 */
public final class FusedWorkload implements AutoCloseable {
    /** B is stored as a Linear layer's weight: N x K. */
    public static final GemmLayout LAYOUT = GemmLayout.NK;
    public static final DType TYPE = DType.BF16;

    private final Iris iris;
    private final FusedShape shape;
    private final int world;
    private final Stream stream;
    private final List<SymTensor> all = new ArrayList<>();
    private SymTensor a;        // the fused kernel's A (all-gather: the gathered A)
    private SymTensor aRows;    // all-gather: this rank's rows of A
    private SymTensor b;
    private SymTensor c;        // the fused output
    private SymTensor local;    // the rank's GEMM output (all-scatter and all-gather: M x N/w; reductions: the M x N partial)
    private SymTensor gathered; // all-scatter: NCCL's gathered output [w][M][N/w]; all-gather: NCCL's gathered A
    private SymTensor out;      // reductions: NCCL's result
    // The library's collective writes apart from NCCL's, so that NCCL's result stays the reference:
    private SymTensor irisGathered; // all-scatter: the gathered output; all-gather: the gathered A
    private SymTensor irisOut;      // reductions: the result; all-gather: the GEMM's output
    private SymTensor windowOut;    // NCCL on its windows: the result, laid out as the baseline's, for the check

    private FusedWorkload(Iris iris, FusedShape shape) {
        this.iris = iris;
        this.shape = shape;
        this.world = iris.worldSize();
        this.stream = iris.stream();
    }

    /** Collective: every tensor of {@code s} on this rank, inputs filled from {@code seed}. */
    public static FusedWorkload allocate(Iris iris, FusedShape s, long seed) {
        String why = s.unsplittable(iris.worldSize());
        if (why != null) {
            throw new IllegalArgumentException("rank " + iris.rank() + ": " + s + ": " + why);
        }
        FusedWorkload w = new FusedWorkload(iris, s);
        try {
            w.fill(seed);
            return w;
        } catch (RuntimeException | Error e) {
            w.close();
            throw e;
        }
    }

    private SymTensor add(SymTensor t) {
        all.add(t);
        return t;
    }

    private void fill(long seed) {
        SymmetricHeap heap = iris.heap();
        int rank = iris.rank();
        int m = shape.m();
        int n = shape.localN(world);
        int k = shape.localK(world);
        switch (shape.op()) {
            case ALL_SCATTER -> {
                a = add(heap.uniform(seed, -1, 1, TYPE, m, k));  // replicated: the same seed on every rank
                b = add(heap.uniform(Seeds.ofRank(seed + 1, rank), -1, 1, TYPE, n, k));
                c = add(heap.empty(TYPE, m, shape.n()));
                local = add(heap.empty(TYPE, m, n));
                gathered = add(heap.empty(TYPE, (long) world * m, n));
                irisGathered = add(heap.empty(TYPE, (long) world * m, n));
                windowOut = add(heap.empty(TYPE, (long) world * m, n));
            }
            case ALL_REDUCE, REDUCE_SCATTER -> {
                a = add(heap.uniform(Seeds.ofRank(seed, rank), -1, 1, TYPE, m, k));
                b = add(heap.uniform(Seeds.ofRank(seed + 1, rank), -1, 1, TYPE, n, k));
                int rows = shape.op() == FusedOp.ALL_REDUCE ? m : m / world;
                c = add(heap.empty(TYPE, rows, n));
                local = add(heap.empty(TYPE, m, n));
                out = add(heap.empty(TYPE, rows, n));
                irisOut = add(heap.empty(TYPE, rows, n));
                windowOut = add(heap.empty(TYPE, rows, n));
            }
            case ALL_GATHER -> {
                int rows = m / world;
                aRows = add(heap.uniform(Seeds.ofRank(seed, rank), -1, 1, TYPE, rows, k));
                a = add(heap.empty(TYPE, m, k));
                Memcpy.deviceToDevice(a.deviceAddress() + (long) rank * rows * k * TYPE.byteSize(), aRows.deviceAddress(),
                        aRows.byteSize(), stream);
                b = add(heap.uniform(Seeds.ofRank(seed + 1, rank), -1, 1, TYPE, n, k));
                c = add(heap.empty(TYPE, m, n));
                local = add(heap.empty(TYPE, m, n));
                gathered = add(heap.empty(TYPE, m, k));
                irisGathered = add(heap.empty(TYPE, m, k));
                irisOut = add(heap.empty(TYPE, m, n));
                windowOut = add(heap.empty(TYPE, m, n));
                Memcpy.deviceToDevice(gathered.deviceAddress(), a.deviceAddress(), a.byteSize(), stream);
                iris.synchronize();
            }
        }
    }

    public FusedShape shape() {
        return shape;
    }

    /** Collective: the fused operation of this shape, in this rank's terms. */
    public FusedGemm create(FusedConfig config) {
        int m = shape.m();
        int n = shape.localN(world);
        int k = shape.localK(world);
        return switch (shape.op()) {
            case ALL_SCATTER -> GemmAllScatter.create(iris, m, n, k, config);
            case ALL_REDUCE -> GemmAllReduce.create(iris, m, n, k, config);
            case REDUCE_SCATTER -> GemmReduceScatter.create(iris, m, n, k, config);
            case ALL_GATHER -> AllGatherGemm.create(iris, m, n, k, config);
        };
    }

    /** Enqueues the fused kernel (and its closing barrier) into {@link #fusedOutput()}. */
    public void fused(FusedGemm g) {
        g.run(a, b, LAYOUT, null, c, stream);
    }

    /** Enqueues the rank's GEMM with a vendor GEMM (all-gather: on NCCL's gathered A). */
    public void vendorGemm(RowMajorGemm vendor) {
        vendorGemm(vendor, (shape.op() == FusedOp.ALL_GATHER ? gathered : a).deviceAddress(), local.deviceAddress());
    }

    /** The vendor GEMM of this shape from A at {@code in} into {@code result}. */
    private void vendorGemm(RowMajorGemm vendor, long in, long result) {
        vendor.gemm(LAYOUT, TYPE, TYPE, shape.m(), shape.localN(world), shape.localK(world), in, b.deviceAddress(), result, false);
    }

    /** Enqueues the same GEMM with the library's {@link Gemm}. */
    public void irisGemm(Gemm gemm) {
        gemm.matmul(shape.op() == FusedOp.ALL_GATHER ? gathered : a, b, LAYOUT, local, stream);
    }

    /** Enqueues the operation's NCCL collective on the baseline's buffers. */
    public void collective(NcclComm nccl) {
        boolean gathers = shape.op() == FusedOp.ALL_SCATTER || shape.op() == FusedOp.ALL_GATHER;
        ncclCollective(nccl, shape.op() == FusedOp.ALL_GATHER ? aRows.deviceAddress() : local.deviceAddress(),
                gathers ? gathered.deviceAddress() : out.deviceAddress());
    }

    /** The operation's NCCL collective from {@code in} (the rank's product; all-gather: its rows of A) into {@code out}. */
    private void ncclCollective(NcclComm nccl, long in, long out) {
        int m = shape.m();
        int n = shape.localN(world);
        int k = shape.localK(world);
        switch (shape.op()) {
            case ALL_SCATTER -> nccl.allGather(in, out, (long) m * n, TYPE, stream);
            case ALL_REDUCE -> nccl.allReduce(in, out, (long) m * n, TYPE, ReduceOp.SUM, stream);
            case REDUCE_SCATTER -> nccl.reduceScatter(in, out, (long) (m / world) * n, TYPE, ReduceOp.SUM, stream);
            case ALL_GATHER -> nccl.allGather(in, out, (long) (m / world) * k, TYPE, stream);
        }
    }

    /**
     * Enqueues the library's own collective ({@link Collectives}; all-reduce with AUTO, the one-shot
     * kernel at small sizes) on the same inputs as {@link #collective}, into this workload's tensors
     * of its own.
     */
    public void irisCollective(Collectives ccl) {
        switch (shape.op()) {
            case ALL_SCATTER -> ccl.allGather(local, irisGathered, stream);
            case ALL_REDUCE -> ccl.allReduce(local, irisOut, ReduceOp.SUM, stream);
            case REDUCE_SCATTER -> ccl.reduceScatter(local, irisOut, ReduceOp.SUM, stream);
            case ALL_GATHER -> ccl.allGather(aRows, irisGathered, stream);
        }
    }

    /** "one_shot", ...: what {@link #irisCollective} runs for an all-reduce of this shape; "" for the other operations. */
    public String irisAlgorithm(Collectives ccl) {
        if (shape.op() != FusedOp.ALL_REDUCE) {
            return "";
        }
        return ccl.resolve(AllReduceAlgorithm.AUTO, local.byteSize()).name().toLowerCase(Locale.ROOT);
    }

    /** The baseline: the vendor GEMM then NCCL in sequence (all-gather: NCCL then the GEMM). */
    public void baseline(RowMajorGemm vendor, NcclComm nccl) {
        if (shape.op() == FusedOp.ALL_GATHER) {
            collective(nccl);
            vendorGemm(vendor);
        } else {
            vendorGemm(vendor);
            collective(nccl);
        }
    }

    /** The vendor GEMM then the library's own collective (all-gather: the collective, then the GEMM on its gathered A). */
    public void baselineIris(RowMajorGemm vendor, Collectives ccl) {
        if (shape.op() == FusedOp.ALL_GATHER) {
            irisCollective(ccl);
            vendorGemm(vendor, irisGathered.deviceAddress(), irisOut.deviceAddress());
        } else {
            vendorGemm(vendor);
            irisCollective(ccl);
        }
    }

    /**
     * Bytes of the input and of the output of this shape's NCCL collective on {@code world} ranks
     * (the rank's product, all-gather's rows of A; what the collective writes): the windows {@link
     * #baselineWindow} needs.
     */
    static long[] windowBytes(FusedShape s, int world) {
        long m = s.m();
        long n = s.localN(world);
        long k = s.localK(world);
        long bytes = TYPE.byteSize();
        return switch (s.op()) {
            case ALL_SCATTER -> new long[] {m * n * bytes, world * m * n * bytes};
            case ALL_REDUCE -> new long[] {m * n * bytes, m * n * bytes};
            case REDUCE_SCATTER -> new long[] {m * n * bytes, m / world * n * bytes};
            case ALL_GATHER -> new long[] {m / world * k * bytes, m * k * bytes};
        };
    }

    /**
     * Before {@link #baselineWindow} is timed: all-gather's input, this rank's rows of A, copied into
     * window 0 once, where the layer before would have written it (the other operations' GEMM writes
     * window 0 itself).
     */
    public void stageWindow(NcclWindows w) {
        if (shape.op() == FusedOp.ALL_GATHER) {
            Memcpy.deviceToDevice(w.address(0), aRows.deviceAddress(), aRows.byteSize(), stream);
        }
    }

    /**
     * The baseline on NCCL's window-registered buffers ({@link NcclWindows}, NCCL's symmetric
     * kernels): the vendor GEMM writes the rank's product into window 0 and NCCL's collective goes
     * from window 0 into window 1; all-gather gathers window 0 (see {@link #stageWindow}) into window
     * 1 and the GEMM reads the gathered A there, into {@link #windowOutput()}.
     */
    public void baselineWindow(RowMajorGemm vendor, NcclComm nccl, NcclWindows w) {
        long in = w.address(0);
        long result = w.address(1);
        if (shape.op() == FusedOp.ALL_GATHER) {
            ncclCollective(nccl, in, result);
            vendorGemm(vendor, result, windowOut.deviceAddress());
        } else {
            vendorGemm(vendor, a.deviceAddress(), in);
            ncclCollective(nccl, in, result);
        }
    }

    /** Poisons window 1, where {@link #baselineWindow} leaves its result (all-gather: the gathered A), before its check. */
    public void poisonWindow(NcclWindows w) {
        Memcpy.memset(w.address(1), 0xFF, windowBytes(shape, world)[1], stream);
    }

    /** Copies {@link #baselineWindow}'s result from window 1 into {@link #windowOutput()} (all-gather: the GEMM wrote it there). */
    public void collectWindow(NcclWindows w) {
        if (shape.op() != FusedOp.ALL_GATHER) {
            Memcpy.deviceToDevice(windowOut.deviceAddress(), w.address(1), windowOut.byteSize(), stream);
        }
    }

    /** Where {@link #collectWindow} leaves the window baseline's result, laid out as {@link #baselineOutput()}. */
    public SymTensor windowOutput() {
        return windowOut;
    }

    /** Where {@link #vendorGemm} and {@link #irisGemm} leave the rank's product, M x N_local (the reductions: M x N, the partial). */
    public SymTensor localProduct() {
        return local;
    }

    /** The fused kernel's output. */
    public SymTensor fusedOutput() {
        return c;
    }

    /** Where the baseline leaves its result: all-scatter [w][M][N/w] (rank-major), the others as the fused output. */
    public SymTensor baselineOutput() {
        return switch (shape.op()) {
            case ALL_SCATTER -> gathered;
            case ALL_GATHER -> local;
            case ALL_REDUCE, REDUCE_SCATTER -> out;
        };
    }

    /** Where {@link #baselineIris} leaves its result, laid out as {@link #baselineOutput()}. */
    public SymTensor baselineIrisOutput() {
        return shape.op() == FusedOp.ALL_SCATTER ? irisGathered : irisOut;
    }

    /** Collective: waits for this rank's stream and frees every tensor. */
    @Override
    public void close() {
        iris.synchronize();
        for (int i = all.size() - 1; i >= 0; i--) {
            all.get(i).closeIfLive();
        }
        all.clear();
    }
}

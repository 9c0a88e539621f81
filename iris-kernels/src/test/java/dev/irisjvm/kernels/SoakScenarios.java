package dev.irisjvm.kernels;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import dev.irisjvm.kernels.fused.FusedScenarios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A long mixed run on every rank (default {@value #DEFAULT_SECONDS} s; first argument or
 * IRIS_SOAK_SECONDS to change): iteration after iteration, the ranks pick the same random operation
 * from a shared seed (RMA tile stores, loads and atomic adds into a neighbour, rounds of device
 * barriers, a fused GEMM + communication operation, and every collective: all-reduce with every algorithm and reduction, reduce-scatter,
 * all-gather, broadcast, all-to-all, all-to-all-v), with random sizes, dtypes and windows, fresh
 * random inputs and poisoned outputs, and check each result against a CPU reference: exactly,
 * because the inputs are small integers whose sums every dtype holds exactly (AVG within its
 * rounding). Tensors are allocated and freed every iteration, so the allocator is soaked too.
 * Prints progress every {@value #PROGRESS_SECONDS} s and, at the end, the iterations and failures
 * per operation; the scenario fails if any check did. Run by {@link SoakGpuTest}.
 *
 * <p>{@link Op#FUSED_GEMM} runs one of the fused GEMM + communication operations ({@link
 * FusedScenarios#randomSmall}: random operation, variant and small shape, on a fresh instance)
 * against the double-precision CPU reference within the stated bound.
 */
public final class SoakScenarios {
    public static final List<String> SCENARIOS = List.of("soak");
    static final int DEFAULT_SECONDS = 180;
    static final int PROGRESS_SECONDS = 15;
    static final int MAX_REPORTED = 20;
    static final DType[] FLOATS = {DType.BF16, DType.F16, DType.F32};

    /** What one iteration does; the ranks draw the same one. */
    enum Op { TILE_STORE, TILE_LOAD, TILE_ATOMIC_ADD, BARRIERS, ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, BROADCAST, ALL_TO_ALL,
        ALL_TO_ALL_V, FUSED_GEMM }

    private final Iris iris;
    private final Collectives ccl;
    private final FusedScenarios fused;
    private final int rank;
    private final int world;
    private final int next;
    private final int prev;
    private final long runSeed;
    private final Map<Op, long[]> counts = new EnumMap<>(Op.class);  // {iterations, failures}
    private final List<String> failures = new ArrayList<>();
    private long iteration;

    private SoakScenarios(Iris iris, Collectives ccl, long runSeed) {
        this.iris = iris;
        this.ccl = ccl;
        this.fused = FusedScenarios.withoutBaselines(iris, runSeed);
        this.rank = iris.rank();
        this.world = iris.worldSize();
        this.next = (rank + 1) % world;
        this.prev = (rank - 1 + world) % world;
        this.runSeed = runSeed;
        for (Op op : Op.values()) counts.put(op, new long[2]);
    }

    public static void main(String[] args) throws Exception {
        String env = System.getenv("IRIS_SOAK_SECONDS");
        int seconds = args.length > 0 ? Integer.parseInt(args[0])
                : env != null && !env.isBlank() ? Integer.parseInt(env.trim()) : DEFAULT_SECONDS;
        IrisConfig config = ScenarioConfigs.of(1L << 30, Duration.ofSeconds(20));
        ScenarioJob.run(config, (iris, runSeed) -> {
            try (Collectives ccl = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(16L << 20))) {
                System.out.println("soak: rank " + iris.rank() + " of " + iris.worldSize() + ", " + seconds + " s, run seed " + runSeed
                        + " (IRIS_TEST_SEED=" + runSeed + " repeats the sequence)");
                SoakScenarios soak = new SoakScenarios(iris, ccl, runSeed);
                return new ScenarioRunner().add("soak", () -> soak.run(seconds)).runAll();
            }
        });
    }

    private void run(int seconds) {
        Random shared = new Random(runSeed);  // the same draws on every rank
        long start = System.nanoTime();
        long deadline = start + seconds * 1_000_000_000L;
        long nextReport = start + PROGRESS_SECONDS * 1_000_000_000L;
        boolean broken = false;  // an operation raised: the ranks may be out of step, so all stop
        while (goOn(rank == 0 && System.nanoTime() < deadline, !broken)) {
            iteration++;
            Op op = Op.values()[shared.nextInt(Op.values().length)];
            long seed = shared.nextLong();
            String failure;
            try {
                failure = switch (op) {
                    case TILE_STORE, TILE_LOAD, TILE_ATOMIC_ADD -> tile(op, shared, seed);
                    case BARRIERS -> barriers(shared, seed);
                    case ALL_REDUCE -> allReduce(shared, seed);
                    case REDUCE_SCATTER -> reduceScatter(shared, seed);
                    case ALL_GATHER -> allGather(shared, seed);
                    case BROADCAST -> broadcast(shared, seed);
                    case ALL_TO_ALL -> allToAll(shared, seed);
                    case ALL_TO_ALL_V -> allToAllV(shared, seed);
                    case FUSED_GEMM -> fused.randomSmall(shared, "soak_" + seed);
                };
            } catch (RuntimeException e) {
                failure = "raised " + e;
                broken = true;
            }
            long[] c = counts.get(op);
            c[0]++;
            if (failure != null) {
                c[1]++;
                if (failures.size() < MAX_REPORTED) failures.add("iteration " + iteration + " " + op + ": " + failure);
                System.out.println("soak: rank " + rank + ": FAILED iteration " + iteration + " " + op + ": " + failure);
            }
            long now = System.nanoTime();
            if (now > nextReport) {
                nextReport = now + PROGRESS_SECONDS * 1_000_000_000L;
                System.out.printf("soak: rank %d: %.0f s, %d iterations, %d failures%n", rank, (now - start) / 1e9, iteration,
                        counts.values().stream().mapToLong(x -> x[1]).sum());
            }
        }
        long failed = counts.values().stream().mapToLong(x -> x[1]).sum();
        StringBuilder summary = new StringBuilder();
        counts.forEach((op, c) -> summary.append(' ').append(op).append('=').append(c[0]).append(c[1] > 0 ? "/" + c[1] + " failed" : ""));
        System.out.printf("soak: rank %d: %d iterations in %.0f s, %d failures;%s%n", rank, iteration,
                (System.nanoTime() - start) / 1e9, failed, summary);
        if (failed > 0) {
            throw new AssertionError(failed + " of " + iteration + " iterations failed: " + String.join(" | ", failures));
        }
    }

    /** Every rank learns whether rank 0's time is up and whether any rank's last operation raised. */
    private boolean goOn(boolean timeLeft, boolean healthy) {
        byte[][] votes = iris.allGather(new byte[] {(byte) (timeLeft ? 1 : 0), (byte) (healthy ? 1 : 0)});
        boolean go = votes[0][0] == 1;
        for (byte[] v : votes) go &= v[1] == 1;
        return go;
    }

    // ---- operations --------------------------------------------------------------------------
    // Each returns null when its result matched the reference, else what differed. Every rank's
    // input comes from seed and the rank, so each rank can rebuild any peer's input on the CPU.

    /** A random window of a rows x cols tensor: stored into next, loaded from next, or added into next. */
    private String tile(Op op, Random shared, long seed) {
        DType t = op == Op.TILE_ATOMIC_ADD ? DType.F32 : FLOATS[shared.nextInt(FLOATS.length)];
        int rows = 1 + shared.nextInt(512), cols = 1 + shared.nextInt(1024);
        int tr = 1 + shared.nextInt(rows), tc = 1 + shared.nextInt(cols);
        int r0 = shared.nextInt(rows - tr + 1), c0 = shared.nextInt(cols - tc + 1);
        float[][] in = new float[world][];
        for (int r = 0; r < world; r++) in[r] = integers(seed, r, rows * cols);
        float poison = op == Op.TILE_ATOMIC_ADD ? 0f : Float.NaN;
        try (SymTensor src = iris.heap().empty(t, rows, cols); SymTensor dst = iris.heap().full(poison, t, rows, cols)) {
            src.copyFrom(in[rank]);
            iris.barrier();
            switch (op) {
                case TILE_STORE -> dst.tile(r0, c0, tr, tc).on(next).storeRemote(src.tile(r0, c0, tr, tc));
                case TILE_LOAD -> src.tile(r0, c0, tr, tc).on(next).loadRemote(dst.tile(r0, c0, tr, tc));
                default -> dst.tile(r0, c0, tr, tc).on(next).atomicAdd(src.tile(r0, c0, tr, tc));
            }
            iris.barrier();
            iris.synchronize();
            int from = op == Op.TILE_LOAD ? next : prev;  // whose data lands here
            float[] expected = new float[rows * cols];
            Arrays.fill(expected, poison);
            for (int i = r0; i < r0 + tr; i++) {
                for (int j = c0; j < c0 + tc; j++) {
                    expected[i * cols + j] = in[from][i * cols + j];
                }
            }
            String result = exact(expected, dst.toFloatArray(), op + " " + t + " " + rows + "x" + cols + " window [" + r0 + "+" + tr
                    + ", " + c0 + "+" + tc + "]");
            iris.barrier();  // no rank frees a tensor a peer still touches
            iris.synchronize();
            return result;
        }
    }

    /** Rounds of write-into-next, device barrier, check, device barrier. */
    private String barriers(Random shared, long seed) {
        int rounds = 1 + shared.nextInt(20);
        String failure = null;  // the first wrong value; every round still runs, so that the ranks stay in step
        try (SymTensor slot = iris.heap().full(-1, DType.I64, 16); SymTensor mine = iris.heap().zeros(DType.I64, 16)) {
            iris.barrier();  // every slot is filled before a peer stores into it
            for (int round = 0; round < rounds; round++) {
                long[] v = new long[16];
                Arrays.fill(v, seed + round * 1000L + rank);
                mine.copyFrom(v);
                slot.whole().on(next).storeRemote(mine.whole());
                iris.barrier();
                iris.synchronize();
                long want = seed + round * 1000L + prev;
                for (long got : slot.toLongArray()) {
                    if (got != want && failure == null) {
                        failure = "round " + round + " of " + rounds + ": slot holds " + got + ", expected " + want;
                    }
                }
                iris.barrier();
            }
            iris.synchronize();
            return failure;
        }
    }

    private String allReduce(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        AllReduceAlgorithm alg = AllReduceAlgorithm.values()[shared.nextInt(AllReduceAlgorithm.values().length)];
        ReduceOp op = ReduceOp.values()[shared.nextInt(ReduceOp.values().length)];
        int n = size(shared, 1 << 22);
        if (alg == AllReduceAlgorithm.ONE_SHOT) n = (int) Math.min(n, ccl.oneShotCapacityBytes() / t.byteSize());
        float[][] in = inputs(seed, n);
        try (SymTensor x = iris.heap().empty(t, n); SymTensor y = iris.heap().full(Float.NaN, t, n)) {
            x.copyFrom(in[rank]);
            ccl.allReduce(x, y, op, alg, iris.stream());
            iris.synchronize();
            return reduced(in, 0, n, op, t, y.toFloatArray(), "allReduce " + alg + " " + op + " " + t + " of " + n);
        }
    }

    private String reduceScatter(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        ReduceOp op = ReduceOp.values()[shared.nextInt(ReduceOp.values().length)];
        int m = size(shared, 1 << 20);
        float[][] in = inputs(seed, m * world);
        try (SymTensor x = iris.heap().empty(t, (long) m * world); SymTensor y = iris.heap().full(Float.NaN, t, m)) {
            x.copyFrom(in[rank]);
            ccl.reduceScatter(x, y, op, iris.stream());
            iris.synchronize();
            return reduced(in, rank * m, m, op, t, y.toFloatArray(), "reduceScatter " + op + " " + t + " of " + m + " per rank");
        }
    }

    private String allGather(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        int n = size(shared, 1 << 20);
        float[][] in = inputs(seed, n);
        try (SymTensor x = iris.heap().empty(t, n); SymTensor y = iris.heap().full(Float.NaN, t, (long) n * world)) {
            x.copyFrom(in[rank]);
            ccl.allGather(x, y, iris.stream());
            iris.synchronize();
            float[] expected = new float[n * world];
            for (int r = 0; r < world; r++) System.arraycopy(in[r], 0, expected, r * n, n);
            return exact(expected, y.toFloatArray(), "allGather " + t + " of " + n);
        }
    }

    private String broadcast(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        int root = shared.nextInt(world);
        int n = size(shared, 1 << 22);
        float[][] in = inputs(seed, n);
        try (SymTensor x = iris.heap().empty(t, n)) {
            x.copyFrom(in[rank]);
            ccl.broadcast(x, root, iris.stream());
            iris.synchronize();
            return exact(in[root], x.toFloatArray(), "broadcast " + t + " of " + n + " from rank " + root);
        }
    }

    private String allToAll(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        int m = size(shared, 1 << 18);
        float[][] in = inputs(seed, m * world);
        try (SymTensor x = iris.heap().empty(t, (long) m * world); SymTensor y = iris.heap().full(Float.NaN, t, (long) m * world)) {
            x.copyFrom(in[rank]);
            ccl.allToAll(x, y, iris.stream());
            iris.synchronize();
            float[] expected = new float[m * world];
            for (int p = 0; p < world; p++) System.arraycopy(in[p], rank * m, expected, p * m, m);  // block rank of p's input
            return exact(expected, y.toFloatArray(), "allToAll " + t + " of " + m + " per peer");
        }
    }

    private String allToAllV(Random shared, long seed) {
        DType t = FLOATS[shared.nextInt(FLOATS.length)];
        int cap = size(shared, 1 << 16);
        long[][] sends = new long[world][world];  // sends[s][d]: elements rank s sends to rank d
        for (int s = 0; s < world; s++) {
            for (int d = 0; d < world; d++) sends[s][d] = shared.nextInt(cap + 1);
        }
        long[] recv = new long[world];
        for (int s = 0; s < world; s++) recv[s] = sends[s][rank];
        float[][] in = new float[world][];
        for (int s = 0; s < world; s++) in[s] = integers(seed, s, (int) Arrays.stream(sends[s]).sum());
        // Allocation is collective (same sizes everywhere), so both tensors are sized for the rank that needs most.
        long xSize = 1, ySize = 1;
        for (int r = 0; r < world; r++) {
            long received = 0;
            for (int s = 0; s < world; s++) received += sends[s][r];
            xSize = Math.max(xSize, Arrays.stream(sends[r]).sum());
            ySize = Math.max(ySize, received);
        }
        try (SymTensor x = iris.heap().empty(t, xSize); SymTensor y = iris.heap().full(Float.NaN, t, ySize)) {
            float[] mine = Arrays.copyOf(in[rank], (int) xSize);
            x.copyFrom(mine);
            ccl.allToAllV(x, sends[rank], y, recv, iris.stream());
            iris.synchronize();
            float[] expected = new float[(int) ySize];
            Arrays.fill(expected, Float.NaN);
            int at = 0;
            for (int s = 0; s < world; s++) {
                int from = 0;
                for (int d = 0; d < rank; d++) from += (int) sends[s][d];
                System.arraycopy(in[s], from, expected, at, (int) recv[s]);
                at += (int) recv[s];
            }
            return exact(expected, y.toFloatArray(), "allToAllV " + t + " sends " + Arrays.deepToString(sends));
        }
    }

    // ---- references and checks ---------------------------------------------------------------

    /** Element counts between 1 and max, mostly small, multiples of 8 half of the time. */
    private int size(Random shared, int max) {
        int n = 1 + (int) Math.min(max - 1, (long) Math.pow(2, shared.nextDouble() * Math.log(max) / Math.log(2)));
        return shared.nextBoolean() ? Math.max(8, n / 8 * 8) : n;
    }

    private float[][] inputs(long seed, int n) {
        float[][] in = new float[world][];
        for (int r = 0; r < world; r++) in[r] = integers(seed, r, n);
        return in;
    }

    /** Integers in [-16, 16]: sums of up to 8 of them are exact in bf16, f16 and f32. */
    private static float[] integers(long seed, int rank, int n) {
        Random random = new Random(seed * 31 + rank);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = random.nextInt(33) - 16;
        return v;
    }

    /** The reduction of elements [from, from + n) of every rank's input. */
    private String reduced(float[][] in, int from, int n, ReduceOp op, DType t, float[] got, String what) {
        for (int i = 0; i < n; i++) {
            double sum = 0, max = Double.NEGATIVE_INFINITY, min = Double.POSITIVE_INFINITY;
            for (float[] x : in) {
                double v = x[from + i];
                sum += v;
                max = Math.max(max, v);
                min = Math.min(min, v);
            }
            double want = switch (op) {
                case SUM -> sum;
                case MAX -> max;
                case MIN -> min;
                case AVG -> sum / world;
            };
            double bound = op == ReduceOp.AVG ? 3 * t.unitRoundoff() * Math.abs(want) + t.halfSmallestSubnormal() : 0;
            if (!(Math.abs(got[i] - want) <= bound)) {
                return what + ": element " + i + " is " + got[i] + ", expected " + want + (bound > 0 ? " within " + bound : "");
            }
        }
        return null;
    }

    private static String exact(float[] expected, float[] got, String what) {
        if (expected.length != got.length) return what + ": " + got.length + " elements, expected " + expected.length;
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(got[i])) {
                return what + ": element " + i + " is " + got[i] + ", expected " + expected[i];
            }
        }
        return null;
    }
}

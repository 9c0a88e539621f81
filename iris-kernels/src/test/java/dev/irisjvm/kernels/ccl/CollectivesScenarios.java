package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.ScenarioConfigs;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.baselines.NcclComm;
import dev.irisjvm.kernels.ccl.CclReference.Accumulator;
import dev.irisjvm.kernels.ccl.CclReference.Rounding;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The collectives ({@link Collectives}) on every rank of a real multi-GPU job, run by {@link
 * CollectivesGpuTest} through the launcher; the exit code is the number of failed scenarios.
 *
 * <p>Rules every scenario follows:
 * <ul>
 * <li>Inputs are fresh random values from seeds that mix the run seed (broadcast from rank 0,
 *     printed, repeatable with {@code IRIS_TEST_SEED}), the case and the owning rank. Each rank
 *     regenerates every peer's input from its seed on its own GPU ({@code heap.randn(seed, ...)}
 *     gives the same tensor on any rank) for the double-precision CPU reference.</li>
 * <li>Outputs are poisoned first (all bytes 0xFF: NaN for bf16 / f16 / f32, 255 for U8 inputs drawn
 *     from [0, 255), -1 for I32 drawn from [0, 2^20)), so an unwritten element never passes.</li>
 * <li>Reductions are compared with the CPU reference within the bounds of {@link CclReference}
 *     (MAX and MIN exactly), and with NCCL's result on the same inputs: bit for bit for MAX, MIN and
 *     two-rank SUM, within our bound plus NCCL's otherwise. Data movement is compared bit for bit
 *     with the reference and with NCCL. Deterministic all-reduce algorithms must give the same
 *     bits on every rank; inputs of out-of-place calls must be left unchanged.</li>
 * <li>No host barrier between a collective and the work around it: the collectives order
 *     themselves against the peers (that is part of what is tested). Checks are collected and
 *     thrown at the end of a scenario, every scenario ends with {@code iris.hostBarrier()}.</li>
 * <li>NCCL is required unless {@code IRIS_TEST_NCCL=off}.</li>
 * </ul>
 */
public final class CollectivesScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "ccl_all_reduce_one_shot",
            "ccl_all_reduce_two_shot",
            "ccl_all_reduce_ring",
            "ccl_all_reduce_atomic",
            "ccl_all_reduce_copy_engine",
            "ccl_copy_engine_paths",
            "ccl_all_reduce_auto",
            "ccl_all_reduce_in_place",
            "ccl_all_reduce_64mib",
            "ccl_reduce_scatter",
            "ccl_all_gather",
            "ccl_broadcast",
            "ccl_all_to_all",
            "ccl_all_to_all_v",
            "ccl_data_movement_64mib",
            "nccl_window_baseline_matches",
            "ccl_back_to_back",
            "ccl_graph_replay",
            "ccl_plain_launches",
            "ccl_misuse",
            "ccl_inline_flag_tag_wrap",
            "ccl_timeout_names_site");

    static final long HEAP_BYTES = 2L << 30;
    static final long STAGING_BYTES = 64L << 20;
    static final long DEVICE_TIMEOUT_MS = 5_000;
    static final long BIG = 64L << 20;
    static final DType[] FLOATS = {DType.BF16, DType.F16, DType.F32};

    private final Collectives ccl;
    private final NcclComm nccl;
    private final boolean ncclRequired;
    private final long runSeed;

    private CollectivesScenarios(Iris iris, Collectives ccl, NcclComm nccl, long runSeed) {
        super(iris, iris.world());
        this.runSeed = runSeed;
        this.ccl = ccl;
        this.nccl = nccl;
        this.ncclRequired = !NcclComm.switchedOffByEnvironment();
    }

    public static void main(String[] argv) throws Exception {
        IrisConfig config = ScenarioConfigs.of(HEAP_BYTES, Duration.ofMillis(DEVICE_TIMEOUT_MS));
        ScenarioJob.run(config, (iris, runSeed) -> {
            NcclComm nccl = NcclComm.open(iris);
            System.out.println(TestSeeds.banner("collectives", iris, runSeed) + ", "
                    + (nccl.available() ? nccl.version() : "NCCL unavailable: " + nccl.reason()));
            try (Collectives ccl = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(STAGING_BYTES))) {
                System.out.println("collectives: " + ccl + ", one-shot up to " + ccl.oneShotCapacityBytes() + " bytes");
                CollectivesScenarios s = new CollectivesScenarios(iris, ccl, nccl, runSeed);
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("ccl_all_reduce_one_shot", () -> s.allReduceMatrix(AllReduceAlgorithm.ONE_SHOT));
                bodies.put("ccl_all_reduce_two_shot", () -> s.allReduceMatrix(AllReduceAlgorithm.TWO_SHOT));
                bodies.put("ccl_all_reduce_ring", () -> s.allReduceMatrix(AllReduceAlgorithm.RING));
                bodies.put("ccl_all_reduce_atomic", () -> s.allReduceMatrix(AllReduceAlgorithm.ATOMIC));
                bodies.put("ccl_all_reduce_copy_engine", () -> s.allReduceMatrix(AllReduceAlgorithm.COPY_ENGINE));
                bodies.put("ccl_copy_engine_paths", s::copyEnginePaths);
                bodies.put("ccl_all_reduce_auto", () -> s.allReduceMatrix(AllReduceAlgorithm.AUTO));
                bodies.put("ccl_all_reduce_in_place", s::allReduceInPlace);
                bodies.put("ccl_all_reduce_64mib", s::allReduceBig);
                bodies.put("ccl_reduce_scatter", s::reduceScatterMatrix);
                bodies.put("ccl_all_gather", s::allGatherMatrix);
                bodies.put("ccl_broadcast", s::broadcastMatrix);
                bodies.put("ccl_all_to_all", s::allToAllMatrix);
                bodies.put("ccl_all_to_all_v", s::allToAllVMatrix);
                bodies.put("ccl_data_movement_64mib", s::dataMovementBig);
                bodies.put("nccl_window_baseline_matches", () -> new NcclWindowScenario(iris, nccl, runSeed).run());
                bodies.put("ccl_back_to_back", () -> s.backToBack(s.ccl));
                bodies.put("ccl_graph_replay", () -> s.graphReplay(s.ccl));
                bodies.put("ccl_plain_launches", s::plainLaunches);
                bodies.put("ccl_misuse", s::misuse);
                bodies.put("ccl_inline_flag_tag_wrap", s::inlineFlagTagWrap);
                bodies.put("ccl_timeout_names_site", s::timeoutNamesSite);  // last: it leaves a device error behind on rank 0
                int failed = ScenarioRunner.runTable(bodies, SCENARIOS, s.iris::hostBarrier);
                iris.synchronize();
                return failed;
            } finally {
                nccl.close();
            }
        });
    }

    // =============================================================================================
    // all-reduce
    // =============================================================================================

    /** 1 element, 3, 4 KiB, an odd count (not a multiple of 8 or of any world size 2..8 but 1), 1 MiB. */
    private static long[] sizes(DType t) {
        return new long[] {1, 3, 4096 / t.byteSize(), 1_000_003, (1L << 20) / t.byteSize()};
    }

    /**
     * sizes(t), both sides of one-shot's switch to inline flags (its largest input, and 16 bytes
     * more), and 1025 words, whose last 12-byte packet is two thirds full (4096 bytes leave one word).
     */
    private long[] allReduceSizes(DType t) {
        long ll = Collectives.llMaxBytes(world) / 4 * 4 / t.byteSize();
        long[] base = sizes(t);
        long[] all = Arrays.copyOf(base, base.length + 3);
        all[base.length] = ll;
        all[base.length + 1] = ll + 16 / t.byteSize();
        all[base.length + 2] = 4100 / t.byteSize();
        return all;
    }

    /**
     * Every dtype x op x size through one algorithm (AUTO: whatever it resolves to). Pass: within
     * the bound of the algorithm's rounding, exact for MAX / MIN; equal to NCCL where
     * exactVsNccl, within both bounds otherwise; the same bits on every rank (not ATOMIC SUM/AVG
     * on more than two ranks); the input unchanged.
     */
    private void allReduceMatrix(AllReduceAlgorithm alg) {
        Failures f = new Failures();
        requireNccl(f);
        for (DType t : FLOATS) {
            for (ReduceOp op : ReduceOp.values()) {
                for (long n : allReduceSizes(t)) {
                    allReduceCase(f, alg, t, op, n);
                }
            }
        }
        f.throwIfAny();
    }

    private void allReduceCase(Failures f, AllReduceAlgorithm alg, DType t, ReduceOp op, long n) {
        AllReduceAlgorithm actual = ccl.resolve(alg, n * t.byteSize());
        String what = "allReduce " + alg + (alg == AllReduceAlgorithm.AUTO ? "(" + actual + ")" : "") + " " + t + " " + op + " n=" + n;
        long[] seeds = seeds("all_reduce", alg.ordinal(), t.ordinal(), op.ordinal(), n);
        float[] got;
        float[] ncclGot = null;
        float[] inAfter;
        try (SymTensor in = heap.randn(seeds[rank], t, n); SymTensor out = heap.empty(t, n); SymTensor ref = heap.empty(t, n)) {
            poison(out);
            poison(ref);
            ccl.allReduce(in, out, op, alg, stream);
            if (nccl.available()) nccl.allReduce(in.deviceAddress(), ref.deviceAddress(), n, t, op, stream);
            iris.synchronize();
            got = out.toFloatArray();
            if (nccl.available()) ncclGot = ref.toFloatArray();
            inAfter = in.toFloatArray();
        }
        Accumulator acc = new Accumulator(op, (int) n);
        for (int p = 0; p < world; p++) {
            float[] x = regenerate(seeds[p], t, n);
            acc.add(x);
            if (p == rank) f.add(CclReference.checkBits(what + ": input after the call", inAfter, 0, x, 0, (int) n));
        }
        Rounding r = CclReference.rounding(actual);
        f.add(CclReference.check(what, got, acc, op, r, t));
        if (ncclGot != null) f.add(CclReference.checkVsNccl(what, got, ncclGot, acc, op, r, t));
        boolean deterministic = !(actual == AllReduceAlgorithm.ATOMIC && world > 2 && (op == ReduceOp.SUM || op == ReduceOp.AVG));
        if (deterministic) f.add(sameOnEveryRank(what, got));
    }

    /**
     * The copy-engine paths on an instance with 64 KiB of staging that takes them at every size
     * (copyEngineBytes 1): COPY_ENGINE all-reduce runs through many chunks (32 KiB each on two
     * ranks) and reuses both staging slots, over the whole matrix (at 1 and 3 elements some ranks'
     * shards are empty), through AUTO and in place; all-gather and all-to-all over their matrices;
     * and all of them captured in a graph beside the kernels' collectives.
     */
    private void copyEnginePaths() throws Exception {
        // Small staging, so that a call runs many chunks; per rank, so that graphReplay's ONE_SHOT of
        // 4099 floats fits on any world.
        Collectives.Options options = Collectives.Options.defaults().withStagingBytes((32L << 10) * world).withCopyEngineBytes(1);
        try (Collectives small = Collectives.create(iris, options)) {
            CollectivesScenarios s = new CollectivesScenarios(iris, small, nccl, runSeed);
            s.allReduceMatrix(AllReduceAlgorithm.COPY_ENGINE);
            s.allReduceMatrix(AllReduceAlgorithm.AUTO);
            s.allReduceInPlace();
            s.allGatherMatrix();
            s.allToAllMatrix();
            graphReplay(small);
            iris.synchronize();
            iris.hostBarrier();  // no rank frees its workspace while a peer may still copy out of it
        }
    }

    /**
     * ONE_SHOT (where the staging holds the input), TWO_SHOT, RING and COPY_ENGINE with out == in:
     * the same bits as the out-of-place call on the same input (the algorithms are deterministic),
     * for every dtype, SUM / AVG / MAX and two sizes.
     */
    private void allReduceInPlace() {
        Failures f = new Failures();
        for (AllReduceAlgorithm alg : new AllReduceAlgorithm[] {
                AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.RING, AllReduceAlgorithm.COPY_ENGINE}) {
            for (DType t : FLOATS) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX}) {
                    for (long n : new long[] {3, 1_000_003}) {
                        if (alg == AllReduceAlgorithm.ONE_SHOT && n * t.byteSize() > ccl.oneShotCapacityBytes()) continue;
                        String what = "allReduce " + alg + " in place " + t + " " + op + " n=" + n;
                        long seed = seeds("in_place", alg.ordinal(), t.ordinal(), op.ordinal(), n)[rank];
                        try (SymTensor in = heap.randn(seed, t, n); SymTensor out = heap.empty(t, n);
                             SymTensor both = heap.randn(seed, t, n)) {
                            poison(out);
                            ccl.allReduce(in, out, op, alg, stream);
                            ccl.allReduce(both, both, op, alg, stream);
                            iris.synchronize();
                            float[] expected = out.toFloatArray();
                            f.add(CclReference.checkBits(what + " vs out of place", both.toFloatArray(), 0, expected, 0, (int) n));
                        }
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /**
     * 64 MiB (bf16 SUM) through TWO_SHOT, RING, ATOMIC, COPY_ENGINE and AUTO, f32 AVG through TWO_SHOT and COPY_ENGINE, and
     * ONE_SHOT at its capacity (64 MiB / world of staging); ONE_SHOT at 64 MiB is refused.
     */
    private void allReduceBig() {
        Failures f = new Failures();
        requireNccl(f);
        long n = BIG / 2;
        for (AllReduceAlgorithm alg : new AllReduceAlgorithm[] {
                AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.RING, AllReduceAlgorithm.ATOMIC, AllReduceAlgorithm.COPY_ENGINE,
                AllReduceAlgorithm.AUTO}) {
            allReduceCase(f, alg, DType.BF16, ReduceOp.SUM, n);
        }
        allReduceCase(f, AllReduceAlgorithm.TWO_SHOT, DType.F32, ReduceOp.AVG, BIG / 4);
        allReduceCase(f, AllReduceAlgorithm.COPY_ENGINE, DType.F32, ReduceOp.AVG, BIG / 4);
        allReduceCase(f, AllReduceAlgorithm.ONE_SHOT, DType.BF16, ReduceOp.SUM, ccl.oneShotCapacityBytes() / 2);
        try (SymTensor in = heap.zeros(DType.BF16, n); SymTensor out = heap.empty(DType.BF16, n)) {
            expectRejected(f, "ONE_SHOT at 64 MiB", () -> ccl.allReduce(in, out, ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, stream),
                    "allReduce: ONE_SHOT needs", "bytes of staging");
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // reduce-scatter
    // =============================================================================================

    /**
     * Every dtype x op x shard size m (in: world x m), on both sides of each switch between the
     * paths (ReduceScatterPath): the largest LL shard and one 16 bytes larger, the largest PUSH
     * input and one element more (PULL), odd counts that are not whole 32-bit words. Bounds as a
     * once-rounded all-reduce.
     */
    private void reduceScatterMatrix() {
        Failures f = new Failures();
        requireNccl(f);
        for (DType t : FLOATS) {
            long llMax = Collectives.llMaxBytes(world) / t.byteSize();
            long pushMax = ReduceScatterPath.PUSH_LIMIT_BYTES / t.byteSize() / world;
            for (ReduceOp op : ReduceOp.values()) {
                for (long m : new long[] {1, 3, 2048 / t.byteSize(), llMax, llMax + 16 / t.byteSize(), 100_003, pushMax,
                        pushMax + 1, (3L << 20) / t.byteSize() / world}) {
                    reduceScatterCase(f, t, op, m);
                }
            }
        }
        f.throwIfAny();
    }

    private void reduceScatterCase(Failures f, DType t, ReduceOp op, long m) {
        String what = "reduceScatter " + ccl.reduceScatterPath(m * t.byteSize()) + " " + t + " " + op + " m=" + m;
        long total = world * m;
        long[] seeds = seeds("reduce_scatter", t.ordinal(), op.ordinal(), m);
        float[] got;
        float[] ncclGot = null;
        try (SymTensor in = heap.randn(seeds[rank], t, total); SymTensor out = heap.empty(t, m); SymTensor ref = heap.empty(t, m)) {
            poison(out);
            poison(ref);
            ccl.reduceScatter(in, out, op, stream);
            if (nccl.available()) nccl.reduceScatter(in.deviceAddress(), ref.deviceAddress(), m, t, op, stream);
            iris.synchronize();
            got = out.toFloatArray();
            if (nccl.available()) ncclGot = ref.toFloatArray();
        }
        Accumulator acc = new Accumulator(op, (int) m);
        for (int p = 0; p < world; p++) {
            acc.add(regenerate(seeds[p], t, total), (int) (rank * m));
        }
        f.add(CclReference.check(what, got, acc, op, Rounding.ONCE, t));
        if (ncclGot != null) f.add(CclReference.checkVsNccl(what, got, ncclGot, acc, op, Rounding.ONCE, t));
    }

    // =============================================================================================
    // all-gather, broadcast, all-to-all, all-to-all-v
    // =============================================================================================

    private static final DType[] MOVED = {DType.BF16, DType.F16, DType.F32, DType.U8, DType.I32};

    /** Every dtype (U8 and I32 too) x size: every rank's slot bit-exact, and equal to NCCL's. */
    private void allGatherMatrix() {
        Failures f = new Failures();
        requireNccl(f);
        for (DType t : MOVED) {
            for (long n : sizes(t)) {
                allGatherCase(f, t, n);
            }
        }
        f.throwIfAny();
    }

    /**
     * Out of place, and in place (in = out.chunk(rank, world), the other blocks poisoned): every
     * slot holds its rank's input, the same bits both ways and as NCCL's.
     */
    private void allGatherCase(Failures f, DType t, long n) {
        String what = "allGather " + t + " n=" + n;
        long[] seeds = seeds("all_gather", t.ordinal(), n);
        float[] got;
        float[] gotInPlace;
        float[] ncclGot = null;
        try (SymTensor in = input(seeds[rank], t, n); SymTensor out = heap.empty(t, world * n);
             SymTensor ref = heap.empty(t, world * n); SymTensor gathered = heap.empty(t, world * n)) {
            poison(out);
            poison(ref);
            poison(gathered);
            SymTensor mine = gathered.chunk(rank, world);
            ByteBuffer bytes = ByteBuffer.allocateDirect((int) in.byteSize()).order(ByteOrder.nativeOrder());
            in.copyTo(bytes);
            mine.copyFrom(bytes.flip());
            ccl.allGather(in, out, stream);
            ccl.allGather(mine, gathered, stream);
            if (nccl.available()) nccl.allGather(in.deviceAddress(), ref.deviceAddress(), n, t, stream);
            iris.synchronize();
            got = values(out);
            gotInPlace = values(gathered);
            if (nccl.available()) ncclGot = values(ref);
        }
        for (int p = 0; p < world; p++) {
            f.add(CclReference.checkBits(what + ": slot of rank " + p, got, (int) (p * n), regenerate(seeds[p], t, n), 0, (int) n));
        }
        f.add(CclReference.checkBits(what + " in place vs out of place", gotInPlace, 0, got, 0, got.length));
        if (ncclGot != null) f.add(CclReference.checkBits(what + " vs NCCL", got, 0, ncclGot, 0, got.length));
    }

    /** Every root x size for BF16, F32 and U8: every rank holds the root's input, as with NCCL. */
    private void broadcastMatrix() {
        Failures f = new Failures();
        requireNccl(f);
        for (DType t : new DType[] {DType.BF16, DType.F32, DType.U8}) {
            for (long n : new long[] {1, 3, 1_000_003, (1L << 20) / t.byteSize()}) {
                for (int root = 0; root < world; root++) {
                    broadcastCase(f, t, n, root);
                }
            }
        }
        f.throwIfAny();
    }

    private void broadcastCase(Failures f, DType t, long n, int root) {
        String what = "broadcast " + t + " n=" + n + " root=" + root;
        long[] seeds = seeds("broadcast", t.ordinal(), n, root);
        float[] got;
        float[] ncclGot = null;
        try (SymTensor buf = input(seeds[rank], t, n); SymTensor orig = input(seeds[rank], t, n); SymTensor ref = heap.empty(t, n)) {
            poison(ref);
            ccl.broadcast(buf, root, stream);
            if (nccl.available()) nccl.broadcast(orig.deviceAddress(), ref.deviceAddress(), n, t, root, stream);
            iris.synchronize();
            got = values(buf);
            if (nccl.available()) ncclGot = values(ref);
        }
        float[] expected = regenerate(seeds[root], t, n);
        f.add(CclReference.checkBits(what, got, 0, expected, 0, (int) n));
        if (ncclGot != null) f.add(CclReference.checkBits(what + " vs NCCL", got, 0, ncclGot, 0, (int) n));
    }

    /** BF16, F32 and U8 x block size m: block r of rank p's out is block p of rank r's in, as with NCCL. */
    private void allToAllMatrix() {
        Failures f = new Failures();
        requireNccl(f);
        for (DType t : new DType[] {DType.BF16, DType.F32, DType.U8}) {
            for (long m : new long[] {1, 3, 2048, 100_003, (1L << 20) / t.byteSize() / world}) {
                allToAllCase(f, t, m);
            }
        }
        f.throwIfAny();
    }

    private void allToAllCase(Failures f, DType t, long m) {
        String what = "allToAll " + t + " m=" + m;
        long total = world * m;
        long[] seeds = seeds("all_to_all", t.ordinal(), m);
        float[] got;
        float[] ncclGot = null;
        try (SymTensor in = input(seeds[rank], t, total); SymTensor out = heap.empty(t, total); SymTensor ref = heap.empty(t, total)) {
            poison(out);
            poison(ref);
            ccl.allToAll(in, out, stream);
            if (nccl.available()) {
                long[] counts = new long[world];
                long[] displs = new long[world];
                for (int p = 0; p < world; p++) {
                    counts[p] = m;
                    displs[p] = p * m;
                }
                nccl.allToAllV(in.deviceAddress(), counts, displs, ref.deviceAddress(), counts, displs, t, stream);
            }
            iris.synchronize();
            got = values(out);
            if (nccl.available()) ncclGot = values(ref);
        }
        for (int p = 0; p < world; p++) {
            f.add(CclReference.checkBits(what + ": block from rank " + p, got, (int) (p * m), regenerate(seeds[p], t, total),
                    (int) (rank * m), (int) m));
        }
        if (ncclGot != null) f.add(CclReference.checkBits(what + " vs NCCL", got, 0, ncclGot, 0, got.length));
    }

    /** Counts (elements) from rank src to rank dst, the same matrix on every rank. */
    private long[][] countMatrix(String kind, long seed) {
        Random r = new Random(seed);
        long[][] c = new long[world][world];
        for (int s = 0; s < world; s++) {
            for (int d = 0; d < world; d++) {
                c[s][d] = switch (kind) {
                    case "random" -> r.nextInt(5) == 0 ? 0 : r.nextInt(5000);
                    case "large" -> 100_000 + r.nextInt(200_000);
                    case "zero" -> 0;
                    default -> (s == 0 && d == world - 1) ? 12_345 : 0;  // "one": a single pair talks
                };
            }
        }
        return c;
    }

    /**
     * Random counts (with zeros), large counts, all zero, a single pair; BF16, F32, U8. Tensors have
     * the same size on every rank (they are symmetric): the largest total plus slack, which must
     * stay poisoned. Pass: every received segment bit-exact; the slack untouched; equal to NCCL's
     * grouped send / receive.
     */
    private void allToAllVMatrix() {
        Failures f = new Failures();
        requireNccl(f);
        for (String kind : new String[] {"random", "large", "zero", "one"}) {
            for (DType t : new DType[] {DType.BF16, DType.F32, DType.U8}) {
                allToAllVCase(f, kind, t);
            }
        }
        f.throwIfAny();
    }

    private void allToAllVCase(Failures f, String kind, DType t) {
        String what = "allToAllV " + kind + " " + t;
        long[][] c = countMatrix(kind, seed("all_to_all_v/counts", kind.hashCode(), t.ordinal()));
        long[] seeds = seeds("all_to_all_v", kind.hashCode(), t.ordinal());
        long maxSend = 0;
        long maxRecv = 0;
        for (int a = 0; a < world; a++) {
            long s = 0, r = 0;
            for (int b = 0; b < world; b++) {
                s += c[a][b];
                r += c[b][a];
            }
            maxSend = Math.max(maxSend, s);
            maxRecv = Math.max(maxRecv, r);
        }
        long inSize = maxSend + 7;
        long outSize = maxRecv + 5;
        long[] send = new long[world];
        long[] recv = new long[world];
        long[] sendDispl = new long[world];
        long[] recvDispl = new long[world];
        long recvTotal = 0;
        for (int p = 0; p < world; p++) {
            send[p] = c[rank][p];
            recv[p] = c[p][rank];
            sendDispl[p] = p == 0 ? 0 : sendDispl[p - 1] + send[p - 1];
            recvDispl[p] = p == 0 ? 0 : recvDispl[p - 1] + recv[p - 1];
            recvTotal += recv[p];
        }
        float[] got;
        float[] ncclGot = null;
        try (SymTensor in = input(seeds[rank], t, inSize); SymTensor out = heap.empty(t, outSize); SymTensor ref = heap.empty(t, outSize)) {
            poison(out);
            poison(ref);
            ccl.allToAllV(in, send, out, recv, stream);
            if (nccl.available()) nccl.allToAllV(in.deviceAddress(), send, sendDispl, ref.deviceAddress(), recv, recvDispl, t, stream);
            iris.synchronize();
            got = values(out);
            if (nccl.available()) ncclGot = values(ref);
        }
        for (int q = 0; q < world; q++) {
            float[] x = regenerate(seeds[q], t, inSize);
            long from = 0;
            for (int d = 0; d < rank; d++) from += c[q][d];  // where rank q keeps what it sends to this rank
            f.add(CclReference.checkBits(what + ": segment from rank " + q, got, (int) recvDispl[q], x, (int) from, (int) recv[q]));
        }
        for (long i = recvTotal; i < outSize; i++) {
            if (!isPoison(got[(int) i], t)) {
                f.fail(what + ": element " + i + " after the received " + recvTotal + " was overwritten with " + got[(int) i]);
                break;
            }
        }
        if (ncclGot != null) f.add(CclReference.checkBits(what + " vs NCCL", got, 0, ncclGot, 0, got.length));
    }

    /** 64 MiB: all-gather (64 MiB out), reduce-scatter SUM (64 MiB in), all-to-all, broadcast; BF16. */
    private void dataMovementBig() {
        Failures f = new Failures();
        requireNccl(f);
        long n = BIG / 2;
        allGatherCase(f, DType.BF16, n / world);
        reduceScatterCase(f, DType.BF16, ReduceOp.SUM, n / world);
        allToAllCase(f, DType.BF16, n / world);
        broadcastCase(f, DType.BF16, n, world - 1);
        f.throwIfAny();
    }

    // =============================================================================================
    // back to back, graphs
    // =============================================================================================

    /**
     * Three rounds of eleven collectives of every kind and algorithm, enqueued back to back with one
     * synchronize at the end; some read what an earlier one wrote (all-gather -> atomic all-reduce,
     * ring -> in-place one-shot). Exercises the epochs, the staging parities (one-shot and PUSH
     * reduce-scatter), the inline-flag parities (LL reduce-scatter, whose calls have no handshake,
     * between calls that have one) and the arrive handshakes across collectives with different
     * grids. Each result is checked against the CPU reference of its own inputs.
     */
    private void backToBack(Collectives collectives) {
        Failures f = new Failures();
        final int rounds = 3;
        final long nA = 100_003, nB = 777, nC = 4099, nD = 5000, mE = 1001, nF = 65536, mG = 513, mR = 2500;
        List<SymTensor> all = new ArrayList<>();
        try {
            SymTensor[][] t = new SymTensor[rounds][];
            long[][][] counts = new long[rounds][][];
            long[] maxSend = new long[rounds];
            long[] maxRecv = new long[rounds];
            for (int k = 0; k < rounds; k++) {
                counts[k] = countMatrix("random", seed("b2b/counts", k));
                for (int a = 0; a < world; a++) {
                    long s = 0, r = 0;
                    for (int b = 0; b < world; b++) {
                        s += counts[k][a][b];
                        r += counts[k][b][a];
                    }
                    maxSend[k] = Math.max(maxSend[k], s);
                    maxRecv[k] = Math.max(maxRecv[k], r);
                }
                t[k] = new SymTensor[] {
                        track(all, heap.randn(seed("b2b", k, 0, rank), DType.BF16, nA)),             // 0 A
                        track(all, heap.empty(DType.BF16, nA)),                                       // 1 X = allReduce one-shot sum
                        track(all, heap.randn(seed("b2b", k, 1, rank), DType.F32, nB)),              // 2 B
                        track(all, heap.empty(DType.F32, world * nB)),                                // 3 Y = allGather(B)
                        track(all, heap.randn(seed("b2b", k, 2, rank), DType.F16, nC)),              // 4 C
                        track(all, heap.empty(DType.F16, nC)),                                        // 5 Z = ring max, then one-shot min in place
                        track(all, heap.randn(seed("b2b", k, 3, rank), DType.BF16, nD)),             // 6 D broadcast in place
                        track(all, heap.randn(seed("b2b", k, 4, rank), DType.BF16, world * mE)),     // 7 E
                        track(all, heap.empty(DType.BF16, mE)),                                       // 8 Q = reduceScatter avg
                        track(all, heap.randn(seed("b2b", k, 5, rank), DType.F32, nF)),              // 9 F two-shot sum in place
                        track(all, heap.randn(seed("b2b", k, 6, rank), DType.BF16, world * mG)),     // 10 G
                        track(all, heap.empty(DType.BF16, world * mG)),                               // 11 H = allToAll
                        track(all, heap.empty(DType.F32, world * nB)),                                // 12 V = atomic sum of Y
                        track(all, heap.randn(seed("b2b", k, 7, rank), DType.F32, maxSend[k] + 3)),  // 13 I
                        track(all, heap.empty(DType.F32, maxRecv[k] + 3)),                            // 14 O = allToAllV
                        track(all, heap.randn(seed("b2b", k, 8, rank), DType.F32, world * mR)),      // 15 R
                        track(all, heap.empty(DType.F32, mR)),                                        // 16 S = reduceScatter min (LL)
                        track(all, heap.empty(DType.BF16, nA)),                                       // 17 M = copy-engine max of A
                };
                for (int i : new int[] {1, 3, 5, 8, 11, 12, 14, 16, 17}) poison(t[k][i]);
            }
            for (int k = 0; k < rounds; k++) {
                SymTensor[] x = t[k];
                long[] send = new long[world];
                long[] recv = new long[world];
                for (int p = 0; p < world; p++) {
                    send[p] = counts[k][rank][p];
                    recv[p] = counts[k][p][rank];
                }
                collectives.allReduce(x[0], x[1], ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, stream);
                collectives.allReduce(x[0], x[17], ReduceOp.MAX, AllReduceAlgorithm.COPY_ENGINE, stream);
                collectives.allGather(x[2], x[3], stream);
                collectives.allReduce(x[4], x[5], ReduceOp.MAX, AllReduceAlgorithm.RING, stream);
                collectives.broadcast(x[6], k % world, stream);
                collectives.reduceScatter(x[7], x[8], ReduceOp.AVG, stream);
                collectives.allReduce(x[9], x[9], ReduceOp.SUM, AllReduceAlgorithm.TWO_SHOT, stream);
                collectives.allToAll(x[10], x[11], stream);
                collectives.allReduce(x[3], x[12], ReduceOp.SUM, AllReduceAlgorithm.ATOMIC, stream);
                collectives.reduceScatter(x[15], x[16], ReduceOp.MIN, stream);
                collectives.allReduce(x[5], x[5], ReduceOp.MIN, AllReduceAlgorithm.ONE_SHOT, stream);
                collectives.allToAllV(x[13], send, x[14], recv, stream);
            }
            iris.synchronize();
            for (int k = 0; k < rounds; k++) {
                SymTensor[] x = t[k];
                String r = "round " + k + ": ";
                Accumulator a = new Accumulator(ReduceOp.SUM, (int) nA);
                Accumulator am = new Accumulator(ReduceOp.MAX, (int) nA);
                Accumulator c = new Accumulator(ReduceOp.MAX, (int) nC);
                Accumulator e = new Accumulator(ReduceOp.AVG, (int) mE);
                Accumulator fs = new Accumulator(ReduceOp.SUM, (int) nF);
                Accumulator rm = new Accumulator(ReduceOp.MIN, (int) mR);
                float[] y = values(x[3]);
                float[] h = values(x[11]);
                Accumulator v = new Accumulator(ReduceOp.SUM, y.length);
                for (int p = 0; p < world; p++) {
                    a.add(regenerate(seed("b2b", k, 0, p), DType.BF16, nA));
                    am.add(regenerate(seed("b2b", k, 0, p), DType.BF16, nA));
                    f.add(CclReference.checkBits(r + "allGather slot " + p, y, (int) (p * nB),
                            regenerate(seed("b2b", k, 1, p), DType.F32, nB), 0, (int) nB));
                    c.add(regenerate(seed("b2b", k, 2, p), DType.F16, nC));
                    e.add(regenerate(seed("b2b", k, 4, p), DType.BF16, world * mE), (int) (rank * mE));
                    fs.add(regenerate(seed("b2b", k, 5, p), DType.F32, nF));
                    rm.add(regenerate(seed("b2b", k, 8, p), DType.F32, world * mR), (int) (rank * mR));
                    float[] g = regenerate(seed("b2b", k, 6, p), DType.BF16, world * mG);
                    f.add(CclReference.checkBits(r + "allToAll block from " + p, h, (int) (p * mG), g, (int) (rank * mG), (int) mG));
                    v.add(y);
                }
                f.add(CclReference.check(r + "one-shot sum", values(x[1]), a, ReduceOp.SUM, Rounding.ONCE, DType.BF16));
                f.add(CclReference.check(r + "copy-engine max", values(x[17]), am, ReduceOp.MAX, Rounding.ONCE, DType.BF16));
                f.add(CclReference.check(r + "ring max then one-shot min in place", values(x[5]), c, ReduceOp.MAX, Rounding.ONCE, DType.F16));
                f.add(CclReference.checkBits(r + "broadcast from " + (k % world), values(x[6]), 0,
                        regenerate(seed("b2b", k, 3, k % world), DType.BF16, nD), 0, (int) nD));
                f.add(CclReference.check(r + "reduceScatter avg", values(x[8]), e, ReduceOp.AVG, Rounding.ONCE, DType.BF16));
                f.add(CclReference.check(r + "two-shot sum in place", values(x[9]), fs, ReduceOp.SUM, Rounding.ONCE, DType.F32));
                f.add(CclReference.check(r + "reduceScatter min (LL)", values(x[16]), rm, ReduceOp.MIN, Rounding.ONCE, DType.F32));
                f.add(CclReference.check(r + "atomic sum of the all-gather", values(x[12]), v, ReduceOp.SUM, Rounding.EVERY_STEP, DType.F32));
                float[] o = values(x[14]);
                long at = 0;
                for (int q = 0; q < world; q++) {
                    float[] in = regenerate(seed("b2b", k, 7, q), DType.F32, maxSend[k] + 3);
                    long from = 0;
                    for (int d = 0; d < rank; d++) from += counts[k][q][d];
                    f.add(CclReference.checkBits(r + "allToAllV from " + q, o, (int) at, in, (int) from, (int) counts[k][q][rank]));
                    at += counts[k][q][rank];
                }
            }
        } finally {
            closeAll(all);
        }
        f.throwIfAny();
    }

    /**
     * Captures a two-shot all-reduce (bf16 sum), a one-shot all-reduce (f32 avg, inline flags), an
     * all-gather (bf16), a reduce-scatter (bf16 max, PUSH through the staging buffers) and a
     * copy-engine all-reduce (bf16 avg, two streams forked and joined in the graph) on a
     * stream of its own once, then replays the graph ten times, writing new inputs (Java random
     * values, so peers regenerate them) and poisoning the outputs between replays, with no host
     * barrier. Each replay gets a new epoch from the device counter; every result is checked
     * against the CPU reference.
     */
    private void graphReplay(Collectives collectives) throws Exception {
        Failures f = new Failures();
        final long nA = 262_147, nB = 4099, nC = 12_345, mD = 12_289, nE = 100_003;
        try (Stream s = Stream.create();
             SymTensor a = heap.empty(DType.BF16, nA); SymTensor ao = heap.empty(DType.BF16, nA);
             SymTensor b = heap.empty(DType.F32, nB); SymTensor bo = heap.empty(DType.F32, nB);
             SymTensor c = heap.empty(DType.BF16, nC); SymTensor co = heap.empty(DType.BF16, world * nC);
             SymTensor d = heap.empty(DType.BF16, world * mD); SymTensor dout = heap.empty(DType.BF16, mD);
             SymTensor e = heap.empty(DType.BF16, nE); SymTensor eo = heap.empty(DType.BF16, nE)) {
            CudaGraph graph;
            s.beginCapture();
            try {
                collectives.allReduce(a, ao, ReduceOp.SUM, AllReduceAlgorithm.TWO_SHOT, s);
                collectives.allReduce(b, bo, ReduceOp.AVG, AllReduceAlgorithm.ONE_SHOT, s);
                collectives.allGather(c, co, s);
                collectives.reduceScatter(d, dout, ReduceOp.MAX, s);
                collectives.allReduce(e, eo, ReduceOp.AVG, AllReduceAlgorithm.COPY_ENGINE, s);
            } finally {
                graph = s.endCapture();
            }
            try (CudaGraph g = graph) {
                for (int rep = 0; rep < 10; rep++) {
                    a.copyFrom(gaussians(seed("graph/a", rep, rank), (int) nA, DType.BF16));
                    b.copyFrom(gaussians(seed("graph/b", rep, rank), (int) nB, DType.F32));
                    c.copyFrom(gaussians(seed("graph/c", rep, rank), (int) nC, DType.BF16));
                    d.copyFrom(gaussians(seed("graph/d", rep, rank), (int) (world * mD), DType.BF16));
                    e.copyFrom(gaussians(seed("graph/e", rep, rank), (int) nE, DType.BF16));
                    poison(ao);
                    poison(bo);
                    poison(co);
                    poison(dout);
                    poison(eo);
                    g.launch(s);
                    s.synchronize();
                    iris.checkDeviceStatus();
                    Accumulator sa = new Accumulator(ReduceOp.SUM, (int) nA);
                    Accumulator sb = new Accumulator(ReduceOp.AVG, (int) nB);
                    Accumulator sd = new Accumulator(ReduceOp.MAX, (int) mD);
                    Accumulator se = new Accumulator(ReduceOp.AVG, (int) nE);
                    float[] gotC = values(co);
                    for (int p = 0; p < world; p++) {
                        sa.add(gaussians(seed("graph/a", rep, p), (int) nA, DType.BF16));
                        sb.add(gaussians(seed("graph/b", rep, p), (int) nB, DType.F32));
                        sd.add(gaussians(seed("graph/d", rep, p), (int) (world * mD), DType.BF16), (int) (rank * mD));
                        se.add(gaussians(seed("graph/e", rep, p), (int) nE, DType.BF16));
                        f.add(CclReference.checkBits("replay " + rep + ": allGather slot " + p, gotC, (int) (p * nC),
                                gaussians(seed("graph/c", rep, p), (int) nC, DType.BF16), 0, (int) nC));
                    }
                    f.add(CclReference.check("replay " + rep + ": two-shot bf16 sum", values(ao), sa, ReduceOp.SUM, Rounding.ONCE, DType.BF16));
                    f.add(CclReference.check("replay " + rep + ": one-shot f32 avg", values(bo), sb, ReduceOp.AVG, Rounding.ONCE, DType.F32));
                    f.add(CclReference.check("replay " + rep + ": reduce-scatter bf16 max", values(dout), sd, ReduceOp.MAX, Rounding.ONCE,
                            DType.BF16));
                    f.add(CclReference.check("replay " + rep + ": copy-engine bf16 avg", values(eo), se, ReduceOp.AVG, Rounding.ONCE,
                            DType.BF16));
                }
            }
            s.synchronize();
        }
        f.throwIfAny();
    }

    /**
     * The back-to-back and graph-replay scenarios again on an instance whose kernels are launched
     * plainly (Options.overlapLaunches off): every other scenario uses the default, overlapped
     * launches, where each kernel is scheduled while its predecessor still runs and waits for it on
     * the device before touching memory.
     */
    private void plainLaunches() throws Exception {
        try (Collectives plain = Collectives.create(iris,
                Collectives.Options.defaults().withStagingBytes(STAGING_BYTES).withOverlapLaunches(false))) {
            backToBack(plain);
            graphReplay(plain);
            iris.synchronize();
            iris.hostBarrier();  // no rank frees its workspace while a peer's last call may still write into it
        }
    }

    /** Normal values from Java's Random, rounded to the dtype as copyFrom(float[]) will round them. */
    private static float[] gaussians(long seed, int n, DType t) {
        Random r = new Random(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            float x = (float) r.nextGaussian();
            v[i] = switch (t) {
                case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(x));
                case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16(x));
                default -> x;
            };
        }
        return v;
    }

    // =============================================================================================
    // misuse
    // =============================================================================================

    /**
     * Every argument check: the exception is IllegalArgumentException (IllegalStateException after
     * close), its message starts with "rank r: call:" and names the argument and what was
     * expected. Afterwards the instance still works (nothing was launched, the ranks' epochs still
     * agree): a two-shot all-reduce gives the right sum.
     */
    private void misuse() {
        Failures f = new Failures();
        int w = world;
        long cap = ccl.oneShotCapacityBytes();
        try (SymTensor i32 = heap.zeros(DType.I32, 1000); SymTensor bf = heap.zeros(DType.BF16, 1000);
             SymTensor bf2 = heap.zeros(DType.BF16, 1000); SymTensor bf999 = heap.zeros(DType.BF16, 999);
             SymTensor f16 = heap.zeros(DType.F16, 1000); SymTensor odd = heap.zeros(DType.BF16, w * 7L + 1);
             SymTensor wide = heap.zeros(DType.BF16, w * 1000L); SymTensor big = heap.zeros(DType.BF16, cap / 2 + 8);
             SymTensor big2 = heap.zeros(DType.BF16, cap / 2 + 8)) {
            AllReduceAlgorithm two = AllReduceAlgorithm.TWO_SHOT;
            expectRejected(f, "I32", () -> ccl.allReduce(i32, i32, ReduceOp.SUM, two, stream),
                    "allReduce: in has dtype I32; expected BF16, F16 or F32");
            expectRejected(f, "dtype mismatch", () -> ccl.allReduce(bf, f16, ReduceOp.SUM, two, stream),
                    "allReduce: out has dtype F16; expected BF16 (the dtype of in)");
            expectRejected(f, "size mismatch", () -> ccl.allReduce(bf, bf999, ReduceOp.SUM, two, stream),
                    "allReduce: out has 999 elements; expected 1000");
            expectRejected(f, "atomic in place", () -> ccl.allReduce(bf, bf, ReduceOp.SUM, AllReduceAlgorithm.ATOMIC, stream),
                    "allReduce: in and out are the same tensor", "ATOMIC is out-of-place only");
            expectRejected(f, "one-shot over capacity", () -> ccl.allReduce(big, big2, ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, stream),
                    "allReduce: ONE_SHOT needs", "inputs of up to " + cap + " bytes");
            expectRejected(f, "null in", () -> ccl.allReduce(null, bf, ReduceOp.SUM, two, stream), "allReduce: in must not be null");
            expectRejected(f, "null op", () -> ccl.allReduce(bf, bf2, null, two, stream), "allReduce: op must not be null");
            expectRejected(f, "null stream", () -> ccl.allReduce(bf, bf2, ReduceOp.SUM, two, null), "allReduce: stream must not be null");
            expectRejected(f, "reduceScatter indivisible", () -> ccl.reduceScatter(odd, bf, ReduceOp.SUM, stream),
                    "reduceScatter: in has " + (w * 7L + 1) + " elements, which the world size " + w + " does not divide");
            expectRejected(f, "reduceScatter out size", () -> ccl.reduceScatter(wide, bf999, ReduceOp.SUM, stream),
                    "reduceScatter: out has 999 elements; expected 1000");
            expectRejected(f, "reduceScatter I32", () -> ccl.reduceScatter(i32, i32, ReduceOp.MAX, stream),
                    "reduceScatter: in has dtype I32");
            expectRejected(f, "allGather out size", () -> ccl.allGather(bf, bf2, stream),
                    "allGather: out has 1000 elements; expected " + (w * 1000L));
            expectRejected(f, "allGather in place at another rank's block",
                    () -> ccl.allGather(wide.chunk((rank + 1) % w, w), wide, stream),
                    "allGather: in", "overlap; in must be apart from out, or out's block of this rank");
            expectRejected(f, "allToAll in place", () -> ccl.allToAll(wide, wide, stream),
                    "allToAll: in and out are the same tensor", "out-of-place");
            expectRejected(f, "allToAll indivisible", () -> ccl.allToAll(odd, odd, stream),
                    "allToAll: in has " + (w * 7L + 1) + " elements, which the world size");
            expectRejected(f, "root too large", () -> ccl.broadcast(bf, w, stream), "broadcast: root " + w + " is out of range [0, " + w + ")");
            expectRejected(f, "root negative", () -> ccl.broadcast(bf, -1, stream), "broadcast: root -1 is out of range");
            long[] ok = new long[w];
            long[] longer = new long[w + 1];
            long[] negative = new long[w];
            negative[w - 1] = -1;
            long[] tooMany = new long[w];
            tooMany[0] = 2000;
            expectRejected(f, "sendCounts length", () -> ccl.allToAllV(bf, longer, bf2, ok, stream),
                    "allToAllV: sendCounts has " + (w + 1) + " entries; expected " + w + " (one per rank)");
            expectRejected(f, "sendCounts negative", () -> ccl.allToAllV(bf, negative, bf2, ok, stream),
                    "allToAllV: sendCounts[" + (w - 1) + "] is -1; counts must be >= 0");
            expectRejected(f, "sendCounts sum", () -> ccl.allToAllV(bf, tooMany, bf2, ok, stream),
                    "allToAllV: sendCounts", "add up to 2000 elements; in has only 1000");
            expectRejected(f, "recvCounts sum", () -> ccl.allToAllV(bf, ok, bf2, tooMany, stream),
                    "allToAllV: recvCounts", "add up to 2000 elements; out has only 1000");
            expectRejected(f, "recvCounts null", () -> ccl.allToAllV(bf, ok, bf2, null, stream), "allToAllV: recvCounts must not be null");
            SymTensor freed = heap.zeros(DType.BF16, 1000);
            freed.close();
            expectRejected(f, "freed", () -> ccl.allReduce(freed, bf, ReduceOp.SUM, two, stream), "allReduce: in SymTensor(", "was freed");

            Collectives closed = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(1 << 20));
            closed.close();
            closed.close();  // twice is fine
            try {
                closed.allReduce(bf, bf2, ReduceOp.SUM, stream);
                f.fail("allReduce after close was accepted");
            } catch (IllegalStateException e) {
                f.check(String.valueOf(e.getMessage()).equals("rank " + rank + ": allReduce called after Collectives.close()"),
                        () -> "after close: " + e.getMessage());
            }
            try (Collectives unstaged = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(0))) {
                expectRejected(f, "copy engine without staging", () -> unstaged.allReduce(bf, bf2, ReduceOp.SUM,
                        AllReduceAlgorithm.COPY_ENGINE, stream), "allReduce: COPY_ENGINE needs staging buffers of at least "
                        + 16L * w + " bytes on " + w + " ranks; this Collectives has 0");
            }
            Collectives.Options mine = Collectives.Options.defaults().withStagingBytes(rank == 0 ? 1 << 20 : 2 << 20);
            expectRejected(f, "options differ", () -> Collectives.create(iris, mine).close(),
                    "Collectives.create: rank ", "every rank must pass the same options");

            // Still in step with the peers: a real call gives the right answer.
            long seed = seed("misuse/after", rank);
            try (SymTensor in = heap.randn(seed, DType.BF16, 4099); SymTensor out = heap.empty(DType.BF16, 4099)) {
                poison(out);
                ccl.allReduce(in, out, ReduceOp.SUM, AllReduceAlgorithm.TWO_SHOT, stream);
                iris.synchronize();
                Accumulator acc = new Accumulator(ReduceOp.SUM, 4099);
                for (int p = 0; p < world; p++) acc.add(regenerate(seed("misuse/after", p), DType.BF16, 4099));
                f.add(CclReference.check("all-reduce after the misuse", values(out), acc, ReduceOp.SUM, Rounding.ONCE, DType.BF16));
            }
        }
        f.throwIfAny();
    }

    private void expectRejected(Failures f, String what, Runnable call, String... fragments) {
        try {
            call.run();
            f.fail(what + ": accepted; expected IllegalArgumentException containing " + Arrays.toString(fragments));
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            f.check(m.startsWith("rank " + rank + ": "), () -> what + ": message does not start with the rank: " + m);
            for (String fragment : fragments) {
                f.check(m.contains(fragment), () -> what + ": message lacks \"" + fragment + "\": " + m);
            }
        }
    }

    // =============================================================================================
    // timeout
    // =============================================================================================

    /**
     * Rank 0 alone broadcasts on an instance of its own; nobody else arrives. Then, on another
     * such instance, rank 0 alone runs a one-shot all-reduce of 4 KiB, whose inline-flag packets
     * from the peers never come (iris::wait_for). Pass, for each: rank 0's synchronize throws
     * IrisDeviceException after about the 5 s device timeout, naming rank 0, the wait site (7701:
     * broadcast, waiting for a peer to arrive; 7102: one-shot all-reduce, waiting for a peer's data,
     * as CclSites.describe says) and a peer in [1, world); afterwards the status is clear and the
     * instances close on every rank.
     */
    /**
     * The inline-flag packets carry the low 32 bits of the call's epoch as their tag. A fresh
     * Collectives (its packet area zeroed) is set so that ONE_SHOT SUM runs epochs 2^32 - 1 .. 2^32
     * + 2, while rank 0 enqueues each call 50 ms late: the others then look at packet slots rank 0
     * has not written yet. Epoch 2^32 is the first call of its parity, so its slots still hold
     * zeros, which a tag of 0 would match: they would sum zeros for rank 0's input at once. Pass:
     * every output is exactly the sum of the ranks' (small integer) inputs.
     */
    private void inlineFlagTagWrap() throws Exception {
        Failures f = new Failures();
        long n = 1000;
        try (Collectives fresh = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(1L << 20));
             SymTensor out = heap.empty(DType.F32, n)) {
            fresh.setEpochForTest((1L << 32) - 2, stream);
            iris.hostBarrier();  // every rank's counter is set before anyone calls
            for (int call = 0; call < 4; call++) {
                long epoch = (1L << 32) - 1 + call;
                try (SymTensor in = heap.full(rank + 1 + call, DType.F32, n)) {
                    poison(out);
                    iris.hostBarrier();
                    if (rank == 0) {
                        Thread.sleep(50);
                    }
                    fresh.allReduce(in, out, ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, stream);
                    iris.synchronize();
                    double expected = world * (world + 1) / 2.0 + (double) world * call;
                    float[] got = out.toFloatArray();
                    long wrong = 0;
                    int firstWrong = -1;
                    for (int i = 0; i < n; i++) {
                        if (got[i] != expected) {
                            wrong++;
                            if (firstWrong < 0) firstWrong = i;
                        }
                    }
                    final long w = wrong;
                    final int at = firstWrong;
                    f.check(wrong == 0, () -> "epoch " + epoch + " (tag 0x" + Long.toHexString(epoch & 0xFFFFFFFFL) + "): " + w
                            + " of " + n + " sums wrong, first [" + at + "] = " + got[at] + ", expected " + expected);
                }
            }
            iris.hostBarrier();  // nobody frees the workspace while a peer may still write into it
        }
        f.throwIfAny();
    }

    private void timeoutNamesSite() {
        Failures f = new Failures();
        int site = CclSites.BROADCAST + CclSites.WAIT_ARRIVE;
        f.check(String.valueOf(CclSites.describe(site)).equals("broadcast: waiting for a peer to arrive"),
                () -> "CclSites.describe(" + site + ") = " + CclSites.describe(site));
        loneTimeout(f, site, (lone, t) -> lone.broadcast(t, 0, stream));
        int packets = CclSites.ALL_REDUCE_ONE_SHOT + CclSites.WAIT_DATA;
        f.check(String.valueOf(CclSites.describe(packets)).equals("one-shot all-reduce: waiting for a peer's data"),
                () -> "CclSites.describe(" + packets + ") = " + CclSites.describe(packets));
        loneTimeout(f, packets, (lone, t) -> lone.allReduce(t, t, ReduceOp.SUM, AllReduceAlgorithm.ONE_SHOT, stream));
        f.throwIfAny();
    }

    /** One collective call that only rank 0 makes, on a fresh instance, timing out at wait site `site`. */
    private void loneTimeout(Failures f, int site, BiConsumer<Collectives, SymTensor> call) {
        try (Collectives lone = Collectives.create(iris, Collectives.Options.defaults().withStagingBytes(1 << 20));
             SymTensor t = heap.zeros(DType.BF16, 2048)) {
            iris.hostBarrier();
            if (rank == 0) {
                long start = System.nanoTime();
                call.accept(lone, t);
                ExpectedDeviceError waited = ExpectedDeviceError.synchronize(iris, start);
                IrisDeviceException caught = waited.error();
                double seconds = waited.seconds();
                if (caught == null) {
                    f.fail("synchronize returned normally although no peer joined the call (wait site " + site + ")");
                } else {
                    IrisDeviceException e = caught;
                    String m = String.valueOf(e.getMessage());
                    f.check(m.startsWith("rank 0:"), () -> "message does not name rank 0: " + m);
                    f.check(m.contains("wait site " + site), () -> "message does not name site " + site + ": " + m);
                    f.check(e.peer() >= 1 && e.peer() < world, () -> "peer " + e.peer() + " is not a peer of rank 0: " + m);
                    f.check(seconds >= 4.9 && seconds <= 15, () -> "exception after " + seconds + " s, expected about 5 s: " + m);
                }
                iris.checkDeviceStatus();  // cleared by the exception
            }
            iris.hostBarrier();
        }
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    private void requireNccl(Failures f) {
        if (!nccl.available() && ncclRequired) {
            f.fail("NCCL is unavailable (" + nccl.reason() + "); set IRIS_TEST_NCCL=off to run without the NCCL comparison");
        }
    }

    private long seed(String what, long... parts) {
        return TestSeeds.derive(runSeed, what, parts);
    }

    /** One seed per rank for a case: element p is rank p's. */
    private long[] seeds(String what, long... parts) {
        long[] s = new long[world];
        long[] withRank = Arrays.copyOf(parts, parts.length + 1);
        for (int p = 0; p < world; p++) {
            withRank[parts.length] = p;
            s[p] = seed(what, withRank);
        }
        return s;
    }

    /** A random tensor: normal values for floats, [0, 255) for U8, [0, 2^20) for I32 (never the poison). */
    private SymTensor input(long seed, DType t, long n) {
        return switch (t) {
            case U8 -> heap.randint(seed, 0, 255, t, n);
            case I32 -> heap.randint(seed, 0, 1 << 20, t, n);
            default -> heap.randn(seed, t, n);
        };
    }

    /** What rank p's input(seed, t, n) holds, regenerated on this GPU. Collective (an allocation). */
    private float[] regenerate(long seed, DType t, long n) {
        try (SymTensor x = input(seed, t, n)) {
            return values(x);
        }
    }

    /** The tensor's elements as floats (exact for every dtype used here). */
    private static float[] values(SymTensor t) {
        return switch (t.dtype()) {
            case U8 -> {
                byte[] b = t.toByteArray();
                float[] v = new float[b.length];
                for (int i = 0; i < b.length; i++) v[i] = b[i] & 0xff;
                yield v;
            }
            case I32 -> {
                int[] b = t.toIntArray();
                float[] v = new float[b.length];
                for (int i = 0; i < b.length; i++) v[i] = b[i];
                yield v;
            }
            default -> t.toFloatArray();
        };
    }

    private void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        iris.synchronize();
    }

    private static boolean isPoison(float v, DType t) {
        return switch (t) {
            case U8 -> v == 255f;
            case I32 -> v == -1f;
            default -> Float.isNaN(v);
        };
    }

    /** A hash of the bits, all-gathered: every rank must hold the same result. */
    private String sameOnEveryRank(String what, float[] got) {
        long h = 1125899906842597L;
        for (float v : got) h = 31 * h + Float.floatToRawIntBits(v);
        byte[][] all = iris.allGather(ByteBuffer.allocate(8).putLong(h).array());
        long[] hashes = new long[all.length];
        boolean same = true;
        for (int r = 0; r < all.length; r++) {
            hashes[r] = ByteBuffer.wrap(all[r]).getLong();
            same &= hashes[r] == h;
        }
        return same ? null : what + ": ranks hold different results (hash by rank " + Arrays.toString(hashes) + ")";
    }

    private static SymTensor track(List<SymTensor> all, SymTensor t) {
        all.add(t);
        return t;
    }

    private static void closeAll(List<SymTensor> tensors) {
        for (int i = tensors.size() - 1; i >= 0; i--) tensors.get(i).close();
    }
}

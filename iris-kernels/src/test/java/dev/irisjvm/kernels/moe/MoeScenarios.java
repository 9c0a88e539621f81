package dev.irisjvm.kernels.moe;

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
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.moe.MoeReference.Dispatch;
import dev.irisjvm.kernels.moe.MoeReference.Source;
import dev.irisjvm.kernels.moe.MoeReference.Sums;
import dev.irisjvm.kernels.nccl.NcclCommunicator;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;

/**
 * MoE dispatch and combine ({@link MoeDispatch}, {@link MoeCombine}) on every rank of a real
 * multi-GPU job (ranks may share a GPU), run by {@link MoeGpuTest} through the launcher; the exit
 * code is the number of failed scenarios. Its inputs, poisoning and combine check serve {@link
 * MoeLowLatencyScenarios} too.
 *
 * <p>Rules every scenario follows:
 * <ul>
 * <li>Inputs are fresh random values from seeds that mix the run seed (broadcast from rank 0,
 *     printed, repeatable with {@code IRIS_TEST_SEED}), the case and the owning rank; every rank
 *     regenerates every peer's tokens, expert ids and weights on the host for the reference
 *     ({@link MoeReference}), which lays out the dispatch as the kernels must.</li>
 * <li>Everything the kernels write is poisoned first (bytes 0xFF: NaN rows, -1 counts and
 *     sources), and input rows past a rank's tokens hold poison too (NaN tokens and weights,
 *     expert id -7), so a row written where it should not be, or read past the tokens, shows.</li>
 * <li>Dispatch is checked bit for bit: each local expert's count and routed total, every received
 *     row against the token it came from, every source, the rows past the count still poisoned, the
 *     stats. The "experts" are the test's: local expert e's output row is bf16(x * (e + 1)),
 *     computed on the host from the received row and uploaded (rows past the count stay NaN, so a
 *     combine that reads one fails); identity experts (combine of the receive buffer itself) where
 *     no host step may intervene (back to back, graph replay). Combine is checked against the
 *     double reference sum_k w_k y_k within {@link MoeReference#combineBound}, and its out rows past
 *     the tokens stay poisoned.</li>
 * <li>No host barrier between a dispatch, the experts and the combine: the kernels order
 *     themselves against the peers. Checks are collected and thrown at the end of a scenario,
 *     every scenario ends with {@code iris.hostBarrier()}.</li>
 * </ul>
 */
public final class MoeScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "moe_uniform",
            "moe_one_hot_expert",
            "moe_empty_ranks",
            "moe_over_capacity_fail",
            "moe_many_routes",
            "moe_bad_expert_id",
            "moe_back_to_back",
            "moe_graph_replay",
            "moe_misuse",
            "moe_vs_nccl_all_to_all_v",
            "moe_timeout_names_site");

    static final long HEAP_BYTES = 1L << 30;
    static final long DEVICE_TIMEOUT_MS = 5_000;
    /** Expert id that poisons the id rows past a rank's tokens (a read of one is an error 17). */
    static final int POISON_ID = -7;

    private final long runSeed;

    MoeScenarios(Iris iris, long runSeed) {
        super(iris, iris.node());
        this.runSeed = runSeed;
    }

    public static void main(String[] argv) throws Exception {
        runAll("moe", SCENARIOS, (iris, runSeed) -> {
            MoeScenarios s = new MoeScenarios(iris, runSeed);
            Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
            bodies.put("moe_uniform", s::uniform);
            bodies.put("moe_one_hot_expert", s::oneHotExpert);
            bodies.put("moe_empty_ranks", s::emptyRanks);
            bodies.put("moe_over_capacity_fail", s::overCapacityFail);
            bodies.put("moe_many_routes", s::manyRoutes);
            bodies.put("moe_bad_expert_id", s::badExpertId);
            bodies.put("moe_back_to_back", s::backToBack);
            bodies.put("moe_graph_replay", s::graphReplay);
            bodies.put("moe_misuse", s::misuse);
            bodies.put("moe_vs_nccl_all_to_all_v", s::versusNccl);
            bodies.put("moe_timeout_names_site", s::timeoutNamesSite);  // last: it leaves a device error behind on rank 0
            return bodies;
        });
    }

    /** The scenarios of a MoE scenario class, by name, for a job's Iris and run seed. */
    @FunctionalInterface
    interface Table {
        Map<String, ScenarioRunner.Scenario> scenarios(Iris iris, long runSeed);
    }

    /**
     * The main of the MoE scenario classes: Iris with their heap and device timeout, the run seed
     * printed after {@code label}, then {@code table}'s scenarios in the order of {@code expected},
     * the ranks meeting after each; exits with the number that failed.
     */
    static void runAll(String label, List<String> expected, Table table) throws Exception {
        IrisConfig config = ScenarioConfigs.of(HEAP_BYTES, Duration.ofMillis(DEVICE_TIMEOUT_MS));
        ScenarioJob.run(config, (iris, runSeed) -> {
            System.out.println(TestSeeds.banner(label, iris, runSeed));
            int failed = ScenarioRunner.runTable(table.scenarios(iris, runSeed), expected, iris::hostBarrier);
            iris.synchronize();
            return failed;
        });
    }

    // =============================================================================================
    // scenarios
    // =============================================================================================

    /**
     * Uniform routing (top-2 and top-4 of distinct experts), different token counts per rank, the
     * capacity exactly the fullest expert's rows (it ends full, nothing is dropped), hidden 2048 and
     * 264; each case dispatched and combined twice, with the same bits both times.
     */
    private void uniform() {
        Failures f = new Failures();
        for (int[] c : new int[][] {{2048, 2, 2, 200}, {264, 4, 4, 900}}) {
            int hidden = c[0], perRank = c[1], topK = c[2], maxTokens = c[3];
            int experts = perRank * world;
            int[] tokens = new int[world];
            for (int p = 0; p < world; p++) tokens[p] = maxTokens - 37 * p % maxTokens;
            Routing routing = new Routing(Routing.UNIFORM, -1, 0);
            String what = "uniform H=" + hidden + " E=" + experts + " k=" + topK;
            long seed = seed("uniform", hidden, topK);
            Inputs[] in = inputs(seed, tokens, hidden, experts, topK, routing);
            int capacity = Math.max(1, maxRouted(in, experts, topK));
            MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, capacity, OverflowPolicy.FAIL, DType.BF16);
            short[] first = runCase(f, what, config, in, Expert.SCALED, null);
            short[] second = runCase(f, what + " (again)", config, in, Expert.SCALED, null);
            f.check(Arrays.equals(first, second), () -> what + ": combine gave different bits on a second run of the same inputs");
        }
        f.throwIfAny();
    }

    /**
     * One hot expert (on the last rank): 90% of the tokens put it first; with the DROP policy and a
     * capacity of a third of its routes, most of its routes are dropped and counted; every other
     * expert is checked as usual. Then the hot expert on rank 0, top-1, every token.
     */
    private void oneHotExpert() {
        Failures f = new Failures();
        int hidden = 512, topK = 2, maxTokens = 300;
        int experts = 4 * world;
        int[] tokens = new int[world];
        Arrays.fill(tokens, maxTokens);
        Routing hot = new Routing(Routing.HOT, experts - 1, 0.9);
        Inputs[] in = inputs(seed("hot"), tokens, hidden, experts, topK, hot);
        int hotRoutes = routedTo(in, experts, topK, experts - 1);
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, Math.max(1, hotRoutes / 3), OverflowPolicy.DROP, DType.BF16);
        runCase(f, "one hot expert " + (experts - 1) + " (DROP, capacity " + config.capacity() + ")", config, in, Expert.SCALED, null);

        Routing all = new Routing(Routing.HOT, 0, 1.0);
        Inputs[] in1 = inputs(seed("hot/all"), tokens, hidden, experts, 1, all);
        MoeConfig top1 = new MoeConfig(hidden, experts, 1, maxTokens, maxTokens, OverflowPolicy.DROP, DType.BF16);
        runCase(f, "every token to expert 0, top-1 (DROP)", top1, in1, Expert.SCALED, null);
        f.throwIfAny();
    }

    /** No tokens on the even ranks (they only receive), then none anywhere, then one token on rank 0 only. */
    private void emptyRanks() {
        Failures f = new Failures();
        int hidden = 256, topK = 2, maxTokens = 128;
        int experts = 2 * world;
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxTokens * world, OverflowPolicy.FAIL, DType.BF16);
        Routing uniform = new Routing(Routing.UNIFORM, -1, 0);
        int[] evenEmpty = new int[world];
        for (int p = 0; p < world; p++) evenEmpty[p] = p % 2 == 0 ? 0 : maxTokens - p;
        runCase(f, "even ranks empty", config, inputs(seed("empty/even"), evenEmpty, hidden, experts, topK, uniform), Expert.SCALED, null);
        runCase(f, "all ranks empty", config, inputs(seed("empty/all"), new int[world], hidden, experts, topK, uniform), Expert.SCALED,
                null);
        int[] one = new int[world];
        one[0] = 1;
        runCase(f, "one token on rank 0", config, inputs(seed("empty/one"), one, hidden, experts, topK, uniform), Expert.SCALED, null);
        f.throwIfAny();
    }

    /**
     * FAIL policy over capacity: every rank's next synchronize raises device error 16 naming the
     * lowest full expert, its rank, the rows routed to it and the capacity; the delivered rows and
     * combine (no contribution from the dropped routes) are still checked, and the instance then
     * runs a call within capacity cleanly.
     */
    private void overCapacityFail() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 200;
        int experts = 2 * world;
        int[] tokens = new int[world];
        Arrays.fill(tokens, maxTokens);
        Inputs[] in = inputs(seed("fail"), tokens, hidden, experts, topK, new Routing(Routing.HOT, 1, 0.7));
        int capacity = Math.max(1, routedTo(in, experts, topK, 1) / 2);
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, capacity, OverflowPolicy.FAIL, DType.BF16);
        Dispatch ref = MoeReference.dispatch(ids(in), experts, topK, capacity);
        int e = ref.firstFull();
        String expected = "expert " + e + " (on rank " + e / (experts / world) + ") was routed " + ref.routed()[e]
                + " rows by all ranks, more than its capacity of " + capacity;
        runCase(f, "over capacity, FAIL", config, in, Expert.SCALED, (what, error) -> {
            if (error == null) {
                f.fail(what + ": synchronize raised nothing; expected device error " + MoeSites.ERROR_OVER_CAPACITY);
            } else {
                f.check(error.code() == MoeSites.ERROR_OVER_CAPACITY && error.getMessage().contains(expected),
                        () -> what + ": expected code " + MoeSites.ERROR_OVER_CAPACITY + " and \"" + expected + "\", got code "
                                + error.code() + ": " + error.getMessage());
            }
        });
        f.throwIfAny();
    }

    /**
     * 160 000 routes on a rank (top-4 of 40 000 tokens, fewer on later ranks): 256 blocks of more
     * than one tile each, hidden 64.
     */
    private void manyRoutes() {
        Failures f = new Failures();
        int hidden = 64, topK = 4, maxTokens = 40_000;
        int experts = 8 * world;
        int[] tokens = new int[world];
        for (int p = 0; p < world; p++) tokens[p] = maxTokens - 1_111 * p;
        Inputs[] in = inputs(seed("many"), tokens, hidden, experts, topK, new Routing(Routing.UNIFORM, -1, 0));
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxRouted(in, experts, topK) - 3, OverflowPolicy.DROP,
                DType.BF16);
        runCase(f, "many routes (DROP, the fullest experts 3 over)", config, in, Expert.SCALED, null);
        f.throwIfAny();
    }

    /**
     * The last rank routes two tokens to experts outside [0, E) (E and -1): its synchronize raises
     * device error 17 naming the first such route and id; the other ranks raise nothing; the bad
     * routes are not delivered and add nothing in combine.
     */
    private void badExpertId() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 64;
        int experts = 2 * world;
        int[] tokens = new int[world];
        Arrays.fill(tokens, maxTokens);
        Inputs[] in = inputs(seed("bad"), tokens, hidden, experts, topK, new Routing(Routing.UNIFORM, -1, 0));
        int last = world - 1;
        in[last].ids[3] = experts;
        in[last].ids[10] = -1;
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxTokens * world, OverflowPolicy.FAIL, DType.BF16);
        String expected = "route 3 (token * topK + k) names expert " + experts + ", outside [0, " + experts + ")";
        runCase(f, "bad expert ids on rank " + last, config, in, Expert.SCALED, (what, error) -> {
            if (rank != last) {
                f.check(error == null, () -> what + ": this rank raised " + error);
            } else if (error == null) {
                f.fail(what + ": synchronize raised nothing; expected device error " + MoeSites.ERROR_BAD_EXPERT);
            } else {
                f.check(error.code() == MoeSites.ERROR_BAD_EXPERT && error.getMessage().contains(expected),
                        () -> what + ": expected code " + MoeSites.ERROR_BAD_EXPERT + " and \"" + expected + "\", got code "
                                + error.code() + ": " + error.getMessage());
            }
        });
        f.throwIfAny();
    }

    /**
     * Five dispatch + combine calls on one instance, each with its own inputs and routing (uniform,
     * hot, empty ranks), identity experts (combine of the receive buffer), with no synchronization
     * between them; every output is checked at the end.
     */
    private void backToBack() {
        int hidden = 256, topK = 2, maxTokens = 160;
        int experts = 2 * world;
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxTokens * world * topK / 2, OverflowPolicy.DROP,
                DType.BF16);
        backToBack("b2b", config, MoeExchange::normal, in -> MoeReference.dispatch(ids(in), experts, topK, config.capacity()));
    }

    /**
     * dispatch + combine (identity experts) captured once on a stream of its own, then replayed
     * four times with new inputs written between replays (same token counts: they are captured),
     * no host barrier; every replay gets a fresh epoch from the device counter and is checked.
     */
    private void graphReplay() throws Exception {
        int hidden = 128, topK = 2, maxTokens = 96;
        int experts = 2 * world;
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxTokens * world, OverflowPolicy.FAIL, DType.BF16);
        graphReplay("graph", config, MoeExchange::normal, in -> MoeReference.dispatch(ids(in), experts, topK, config.capacity()));
    }

    /** How a scenario makes the exchange under test: {@link MoeExchange#normal} or {@link MoeExchange#lowLatency}. */
    @FunctionalInterface
    interface Mode {
        MoeExchange create(Iris iris, MoeConfig config);
    }

    /**
     * Five dispatch + combine calls on one {@code mode} instance, each with its own inputs (uniform
     * and hot routing by turns, the odd ranks empty in the fourth), identity experts, with no
     * synchronization between them; each output checked at the end against {@code reference}.
     */
    void backToBack(String seedName, MoeConfig config, Mode mode, Function<Inputs[], Dispatch> reference) {
        Failures f = new Failures();
        int maxTokens = config.maxTokens();
        int experts = config.experts();
        int calls = 5;
        List<Inputs[]> all = new ArrayList<>();
        for (int c = 0; c < calls; c++) {
            int[] tokens = new int[world];
            for (int p = 0; p < world; p++) tokens[p] = c == 3 && p % 2 == 1 ? 0 : maxTokens - (c * 13 + p * 7) % maxTokens;
            Routing routing = c % 2 == 0 ? new Routing(Routing.UNIFORM, -1, 0) : new Routing(Routing.HOT, c % experts, 0.95);
            all.add(inputs(seed(seedName, c), tokens, config.hidden(), experts, config.topK(), routing));
        }
        try (MoeExchange exchange = mode.create(iris, config)) {
            List<SymTensor[]> ops = new ArrayList<>();
            try {
                for (int c = 0; c < calls; c++) ops.add(upload(config, all.get(c)[rank]));  // [tokens, ids, weights, out]
                for (int c = 0; c < calls; c++) {
                    SymTensor[] t = ops.get(c);
                    exchange.dispatch(t[0], t[1], t[2], all.get(c)[rank].tokens, stream);
                    exchange.combine(exchange.received(), t[3], stream);
                }
                iris.synchronize();
                for (int c = 0; c < calls; c++) {
                    Inputs[] in = all.get(c);
                    checkCombine(f, "call " + c, config, reference.apply(in), in, Expert.IDENTITY, bits(ops.get(c)[3]));
                }
            } finally {
                for (SymTensor[] t : ops) closeAll(t);
            }
        }
        f.throwIfAny();
    }

    /**
     * dispatch + combine (identity experts) of a {@code mode} instance captured once on a stream of
     * its own, then replayed four times with new inputs written between replays (same token counts:
     * they are captured), no host barrier; each replay checked against {@code reference}.
     */
    void graphReplay(String seedName, MoeConfig config, Mode mode, Function<Inputs[], Dispatch> reference) throws Exception {
        Failures f = new Failures();
        int hidden = config.hidden(), topK = config.topK(), maxTokens = config.maxTokens();
        int experts = config.experts();
        int[] tokens = new int[world];
        for (int p = 0; p < world; p++) tokens[p] = maxTokens - 5 * p;
        try (MoeExchange exchange = mode.create(iris, config); Stream s = Stream.create()) {
            Inputs[] first = inputs(seed(seedName, 0), tokens, hidden, experts, topK, new Routing(Routing.UNIFORM, -1, 0));
            SymTensor[] t = upload(config, first[rank]);
            try {
                CudaGraph graph;
                s.beginCapture();
                try {
                    exchange.dispatch(t[0], t[1], t[2], tokens[rank], s);
                    exchange.combine(exchange.received(), t[3], s);
                } finally {
                    graph = s.endCapture();
                }
                try (CudaGraph g = graph) {
                    for (int rep = 0; rep < 4; rep++) {
                        Routing routing = rep % 2 == 0 ? new Routing(Routing.UNIFORM, -1, 0) : new Routing(Routing.HOT, rep, 0.8);
                        Inputs[] in = rep == 0 ? first : inputs(seed(seedName, rep), tokens, hidden, experts, topK, routing);
                        fill(config, in[rank], t);
                        g.launch(s);
                        s.synchronize();
                        iris.checkDeviceStatus();
                        checkCombine(f, "replay " + rep, config, reference.apply(in), in, Expert.IDENTITY, bits(t[3]));
                    }
                }
                s.synchronize();
            } finally {
                closeAll(t);
            }
        }
        f.throwIfAny();
    }

    /**
     * What the Java side refuses, alike on every rank, with the instance usable afterwards: a combine
     * with no dispatch before it, a second combine of one dispatch, too many tokens, a tokens tensor
     * of the wrong width or dtype, expert outputs of the wrong shape, a config whose experts the
     * node does not divide (at creation, before anything is allocated).
     */
    private void misuse() {
        Failures f = new Failures();
        int hidden = 64, topK = 2, maxTokens = 16;
        int experts = 2 * world;
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, maxTokens * topK * world, OverflowPolicy.FAIL, DType.BF16);
        if (world > 1) {
            MoeConfig odd = new MoeConfig(hidden, experts + 1, topK, maxTokens, 4, OverflowPolicy.DROP, DType.BF16);
            expectThrows(f, IllegalArgumentException.class, "experts is " + (experts + 1) + ", which the node's " + world
                    + " ranks do not divide", () -> MoeDispatch.create(iris, odd));
        }
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeCombine combine = MoeCombine.create(dispatch);
             SymTensor x = heap.zeros(DType.BF16, maxTokens, hidden); SymTensor ids = heap.zeros(DType.I32, maxTokens, topK);
             SymTensor w = heap.zeros(DType.F32, maxTokens, topK); SymTensor y = heap.zeros(DType.BF16, maxTokens, hidden);
             SymTensor narrow = heap.zeros(DType.BF16, maxTokens, hidden / 2); SymTensor f32 = heap.zeros(DType.F32, maxTokens, hidden)) {
            expectThrows(f, IllegalStateException.class, "no dispatch to combine", () -> combine.combine(dispatch.received(), y, stream));
            expectThrows(f, IllegalArgumentException.class, "numTokens is 17; expected 0 to maxTokens (16)",
                    () -> dispatch.dispatch(x, ids, w, 17, stream));
            expectThrows(f, IllegalArgumentException.class, "tokens has shape [16, 32]; expected [rows, 64]",
                    () -> dispatch.dispatch(narrow, ids, w, 4, stream));
            expectThrows(f, IllegalArgumentException.class, "tokens has dtype F32; expected BF16",
                    () -> dispatch.dispatch(f32, ids, w, 4, stream));
            expectThrows(f, IllegalArgumentException.class, "weights has dtype I32; expected F32",
                    () -> dispatch.dispatch(x, ids, ids, 4, stream));
            dispatch.dispatch(x, ids, w, maxTokens, stream);  // all to expert 0, weight 0
            expectThrows(f, IllegalArgumentException.class, "expertOutputs has shape [16, 64]",
                    () -> combine.combine(x, y, stream));
            combine.combine(dispatch.received(), y, stream);
            expectThrows(f, IllegalStateException.class, "no dispatch to combine", () -> combine.combine(dispatch.received(), y, stream));
            iris.synchronize();
            MoeStats st = dispatch.stats(stream);
            int want = rank == 0 ? maxTokens * topK * world : 0;  // every id 0: expert 0, on rank 0
            f.check(st.counts()[0] == want && st.droppedAll() == 0, () -> "misuse: the call after the refused ones: " + st
                    + "; expected " + want + " rows for local expert 0");
        }
        f.throwIfAny();
    }

    /**
     * The library's path against what a user has without it ({@link MoeNcclPath}: NCCL
     * all-to-all-v there and back, the experts' GEMMs in between) on the same routing: uniform, one
     * hot expert, and tokens on the odd ranks only. Each expert is a GEMM with its own random
     * weight, the library's GEMM on both paths. The experts' inputs and outputs must agree bit for
     * bit, and combine must lie within its bound of the weighted sum of the rows NCCL brought home.
     */
    private void versusNccl() {
        Failures f = new Failures();
        if (iris.worldSize() != world) {
            throw new IllegalStateException("rank " + rank + ": moe_vs_nccl_all_to_all_v runs on one node; this job has "
                    + iris.worldSize() + " ranks on nodes of " + world);
        }
        int hidden = 256, topK = 2, maxTokens = 300;
        int experts = 4 * world;
        int[] uneven = new int[world];
        int[] oddOnly = new int[world];
        for (int p = 0; p < world; p++) {
            uneven[p] = maxTokens - 41 * p % maxTokens;
            oddOnly[p] = p % 2 == 1 ? maxTokens - p : 0;
        }
        NcclCommunicator nccl = NcclTeams.of(iris).world();
        try (Gemm gemm = Gemm.create()) {
            versusNccl(f, gemm, nccl, "uniform", uneven, new Routing(Routing.UNIFORM, -1, 0), hidden, experts, topK, maxTokens);
            versusNccl(f, gemm, nccl, "one hot expert", uneven, new Routing(Routing.HOT, experts - 1, 0.9), hidden, experts, topK,
                    maxTokens);
            versusNccl(f, gemm, nccl, "odd ranks only", oddOnly, new Routing(Routing.UNIFORM, -1, 0), hidden, experts, topK, maxTokens);
        }
        f.throwIfAny();
    }

    private void versusNccl(Failures f, Gemm gemm, NcclCommunicator nccl, String what, int[] tokens, Routing routing, int hidden,
                            int experts, int topK, int maxTokens) {
        int local = experts / world;
        Inputs[] in = inputs(seed("nccl/" + what), tokens, hidden, experts, topK, routing);
        int capacity = Math.max(1, maxRouted(in, experts, topK));
        MoeConfig config = new MoeConfig(hidden, experts, topK, maxTokens, capacity, OverflowPolicy.FAIL, DType.BF16);
        Dispatch ref = MoeReference.dispatch(ids(in), experts, topK, capacity);
        long slotBytes = (long) capacity * hidden * 2;
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeCombine combine = MoeCombine.create(dispatch);
             SymTensor weights = heap.empty(DType.BF16, local, hidden, hidden);
             SymTensor expertOut = heap.empty(DType.BF16, local, capacity, hidden)) {
            weights.copyFrom(HostMatrix.random(seed("nccl/w", rank), DType.BF16, local * hidden, hidden).values());
            SymTensor[] t = upload(config, in[rank]);
            try {
                poison(dispatch.received());
                poison(expertOut);
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens, stream);
                iris.synchronize();
                int[] counts = dispatch.counts().toIntArray();
                for (int l = 0; l < local; l++) {
                    if (counts[l] <= 0 || counts[l] > capacity) continue;   // checked below
                    gemm.matmul(new DeviceMatrix(dispatch.received().deviceAddress() + l * slotBytes, DType.BF16, counts[l], hidden, hidden),
                            DeviceMatrix.contiguous(weights.deviceAddress() + (long) l * hidden * hidden * 2, DType.BF16, hidden, hidden),
                            GemmLayout.NK, 0, new DeviceMatrix(expertOut.deviceAddress() + l * slotBytes, DType.BF16, counts[l], hidden, hidden),
                            stream);
                }
                combine.combine(expertOut, t[3], stream);
                iris.synchronize();
                short[] received = bits(dispatch.received());
                short[] produced = bits(expertOut);
                short[] got = bits(t[3]);
                MoeNcclPath.Result base = MoeNcclPath.run(heap, nccl, gemm, weights, in, rank, experts, topK, hidden, maxTokens, stream);
                for (int l = 0; l < local; l++) {
                    int e = rank * local + l;
                    int want = base.expertInputs()[l].length / hidden;
                    int count = counts[l];
                    if (count != want) {
                        f.fail(what + ": expert " + e + " got " + count + " rows from dispatch; NCCL delivered " + want);
                        continue;
                    }
                    int from = (int) (l * slotBytes / 2);
                    f.check(Arrays.equals(received, from, from + want * hidden, base.expertInputs()[l], 0, want * hidden),
                            () -> what + ": expert " + e + ": the dispatched rows differ from the rows NCCL delivered, regrouped");
                    f.check(Arrays.equals(produced, from, from + want * hidden, base.expertOutputs()[l], 0, want * hidden),
                            () -> what + ": expert " + e + ": the GEMM of the dispatched rows differs from the GEMM of NCCL's");
                }
                checkCombine(f, what + " (against NCCL's rows)", config, ref, in[rank], (r, route) -> {
                    float[] row = new float[hidden];
                    for (int h = 0; h < hidden; h++) row[h] = HalfFloats.bf16ToFloat(base.home()[route][h]);
                    return row;
                }, got);
            } finally {
                closeAll(t);
            }
        }
    }

    /**
     * Only rank 0 dispatches on a fresh instance: it gives up at wait site 9301 (its count kernel's
     * last block waiting for the peers to arrive), and its synchronize names the site, which {@link
     * MoeSites#describe} explains.
     */
    private void timeoutNamesSite() {
        Failures f = new Failures();
        f.check(String.valueOf(MoeSites.describe(MoeSites.ARRIVE)).startsWith("MoE dispatch: waiting for a peer to start"),
                () -> "MoeSites.describe(" + MoeSites.ARRIVE + ") = " + MoeSites.describe(MoeSites.ARRIVE));
        if (world < 2) {
            f.throwIfAny();
            return;
        }
        int hidden = 64, topK = 1, maxTokens = 8;
        MoeConfig config = new MoeConfig(hidden, world, topK, maxTokens, maxTokens * world, OverflowPolicy.FAIL, DType.BF16);
        try (MoeDispatch lone = MoeDispatch.create(iris, config); SymTensor x = heap.zeros(DType.BF16, maxTokens, hidden);
             SymTensor ids = heap.zeros(DType.I32, maxTokens, topK); SymTensor w = heap.zeros(DType.F32, maxTokens, topK)) {
            if (rank == 0) {
                long start = System.nanoTime();
                lone.dispatch(x, ids, w, stream);
                ExpectedDeviceError got = ExpectedDeviceError.synchronize(iris, start);
                String site = "wait site " + MoeSites.ARRIVE;
                f.check(got.error() != null && got.error().getMessage().contains(site),
                        () -> "lone dispatch: expected a timeout at " + site + ", got " + got.error());
                f.check(got.seconds() < 4 * DEVICE_TIMEOUT_MS / 1000.0, () -> "lone dispatch: it took " + got.seconds() + " s");
            }
            iris.hostBarrier();  // rank 0's kernels are over before any rank frees the instance
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // one checked case
    // =============================================================================================

    /** What the test's experts compute from a received row of global expert e. */
    enum Expert {
        /** bf16(x * (e + 1)), on the host. */
        SCALED,
        /** x itself: combine of the receive buffer. */
        IDENTITY;

        float value(float x, int expert) {
            return this == IDENTITY ? x : HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(x * (expert + 1)));
        }
    }

    /** Checks a synchronize's device error (null: none). */
    @FunctionalInterface
    interface ErrorCheck {
        void check(String what, IrisDeviceException error);
    }

    /**
     * One dispatch, experts and combine on a fresh instance, everything checked. {@code errors}:
     * null means the dispatch must raise nothing. Returns this rank's combine output bits.
     */
    private short[] runCase(Failures f, String what, MoeConfig config, Inputs[] in, Expert expert, ErrorCheck errors) {
        int topK = config.topK();
        int hidden = config.hidden();
        int l = config.experts() / world;
        Dispatch ref = MoeReference.dispatch(ids(in), config.experts(), topK, config.capacity());
        short[] result;
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeCombine combine = MoeCombine.create(dispatch);
             SymTensor expertOut = heap.empty(DType.BF16, l, config.capacity(), hidden)) {
            SymTensor[] t = upload(config, in[rank]);
            try {
                poison(dispatch.received());
                poison(dispatch.sources());
                poison(dispatch.counts());
                poison(dispatch.routed());
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens, stream);
                IrisDeviceException error = ExpectedDeviceError.synchronize(iris, System.nanoTime()).error();
                if (errors == null) {
                    f.check(error == null, () -> what + ": dispatch raised " + error);
                } else {
                    errors.check(what, error);
                }
                checkDispatch(f, what, config, ref, in, dispatch);
                // The experts, on the host: rows past the count stay NaN.
                short[] y = expertOutputs(bits(dispatch.received()), dispatch.counts().toIntArray(), config.capacity(), hidden,
                        le -> rank * l + le, expert);
                expertOut.copyFrom(shorts(y));
                combine.combine(expertOut, t[3], stream);
                IrisDeviceException late = ExpectedDeviceError.synchronize(iris, System.nanoTime()).error();
                f.check(late == null, () -> what + ": combine raised " + late);
                result = bits(t[3]);
                checkCombine(f, what, config, ref, in, expert, result);
            } finally {
                closeAll(t);
            }
        }
        return result;
    }

    /**
     * The test's experts on the host over a receive buffer of {@code counts.length} slots of {@code
     * slotRows} rows: each slot's first counts rows (at most slotRows) through {@code expert} as
     * global expert {@code expertOf(slot)}; every other row NaN, so that a combine that reads one fails.
     */
    static short[] expertOutputs(short[] recv, int[] counts, int slotRows, int hidden, IntUnaryOperator expertOf, Expert expert) {
        short[] y = new short[recv.length];
        Arrays.fill(y, (short) -1);
        for (int slot = 0; slot < counts.length; slot++) {
            int e = expertOf.applyAsInt(slot);
            for (int j = 0; j < Math.min(counts[slot], slotRows); j++) {
                int at = (slot * slotRows + j) * hidden;
                for (int h = 0; h < hidden; h++) {
                    y[at + h] = HalfFloats.floatToBf16(expert.value(HalfFloats.bf16ToFloat(recv[at + h]), e));
                }
            }
        }
        return y;
    }

    /** counts, routed, received rows, sources and the rows past each count, and the stats, against the reference. */
    private void checkDispatch(Failures f, String what, MoeConfig config, Dispatch ref, Inputs[] in, MoeDispatch dispatch) {
        int hidden = config.hidden();
        int capacity = config.capacity();
        int l = dispatch.localExperts();
        int[] counts = dispatch.counts().toIntArray();
        int[] routed = dispatch.routed().toIntArray();
        int[] sources = dispatch.sources().toIntArray();
        short[] recv = bits(dispatch.received());
        for (int le = 0; le < l; le++) {
            int e = rank * l + le;
            List<Source> rows = ref.rows().get(e);
            int want = rows.size();
            int expert = e;
            int got = counts[le];
            int gotRouted = routed[le];
            f.check(got == want, () -> what + ": expert " + expert + " got " + got + " rows; expected " + want);
            f.check(gotRouted == ref.routed()[e], () -> what + ": expert " + expert + " routed " + gotRouted + "; expected "
                    + ref.routed()[expert]);
            for (int j = 0; j < capacity; j++) {
                int slot = le * capacity + j;
                int row = j;
                if (j < want) {
                    Source src = rows.get(j);
                    f.check(sources[2 * slot] == src.rank() && sources[2 * slot + 1] == src.route(),
                            () -> what + ": expert " + expert + " row " + row + " says it came from rank " + sources[2 * slot] + " route "
                                    + sources[2 * slot + 1] + "; expected rank " + src.rank() + " route " + src.route());
                    short[] x = in[src.rank()].x;
                    int from = src.route() / config.topK() * hidden;
                    if (!Arrays.equals(recv, slot * hidden, (slot + 1) * hidden, x, from, from + hidden)) {
                        f.fail(what + ": expert " + expert + " row " + row + " differs from rank " + src.rank() + "'s token "
                                + src.route() / config.topK());
                    }
                } else {
                    f.check(sources[2 * slot] == -1 && sources[2 * slot + 1] == -1,
                            () -> what + ": expert " + expert + " row " + row + " past its " + want + " rows has a source written");
                    for (int h = 0; h < hidden; h++) {
                        if (recv[slot * hidden + h] != (short) -1) {
                            f.fail(what + ": expert " + expert + " row " + row + " past its " + want + " rows was written");
                            break;
                        }
                    }
                }
            }
        }
        MoeStats st = dispatch.stats(stream);
        f.check(st.droppedHere() == ref.droppedHere()[rank] && st.droppedAll() == ref.droppedAll() && st.badHere() == ref.badHere()[rank]
                        && st.fullExperts() == ref.fullExperts(),
                () -> what + ": stats " + st + "; expected droppedHere " + ref.droppedHere()[rank] + ", droppedAll " + ref.droppedAll()
                        + ", badHere " + ref.badHere()[rank] + ", fullExperts " + ref.fullExperts());
    }

    /** This rank's combine output ({@code got}: bits of [maxTokens, hidden]) against the double reference; rows past the tokens poisoned. */
    void checkCombine(Failures f, String what, MoeConfig config, Dispatch ref, Inputs[] in, Expert expert, short[] got) {
        int hidden = config.hidden();
        int topK = config.topK();
        checkCombine(f, what, config, ref, in[rank], (r, route) -> {
            int e = in[r].ids[route];
            float[] row = new float[hidden];
            int from = route / topK * hidden;
            for (int h = 0; h < hidden; h++) row[h] = expert.value(HalfFloats.bf16ToFloat(in[r].x[from + h]), e);
            return row;
        }, got);
    }

    /** The same, with the expert output row of each of this rank's routes given. */
    private void checkCombine(Failures f, String what, MoeConfig config, Dispatch ref, Inputs mine, MoeReference.RowOf expertRow,
                              short[] got) {
        int hidden = config.hidden();
        int topK = config.topK();
        Sums sums = MoeReference.combine(ref, rank, mine.tokens, hidden, mine.w, expertRow);
        int bad = 0;
        String first = null;
        for (int i = 0; i < mine.tokens * hidden; i++) {
            double g = HalfFloats.bf16ToFloat(got[i]);
            double bound = MoeReference.combineBound(sums.out()[i], sums.abs()[i], topK);
            if (!(Math.abs(g - sums.out()[i]) <= bound)) {
                if (bad++ == 0) {
                    first = "token " + i / hidden + " element " + i % hidden + ": " + g + ", expected " + sums.out()[i] + " +- " + bound;
                }
            }
        }
        if (bad > 0) f.fail(what + ": combine: " + bad + " elements outside the bound, first " + first);
        for (int i = mine.tokens * hidden; i < got.length; i++) {
            if (got[i] != (short) -1) {
                f.fail(what + ": combine wrote out row " + i / hidden + ", past this rank's " + mine.tokens + " tokens");
                break;
            }
        }
    }

    // =============================================================================================
    // inputs
    // =============================================================================================

    /** How tokens pick experts: uniformly (distinct), or the first choice {@code hot} with probability {@code p}. */
    record Routing(int kind, int hot, double p) {
        static final int UNIFORM = 0;
        static final int HOT = 1;
    }

    /** One rank's inputs: {@code tokens} rows of bf16 bits, ids and weights token-major. */
    record Inputs(int tokens, short[] x, int[] ids, float[] w) {}

    Inputs[] inputs(long seed, int[] tokens, int hidden, int experts, int topK, Routing routing) {
        Inputs[] in = new Inputs[world];
        for (int p = 0; p < world; p++) {
            SplittableRandom r = new SplittableRandom(TestSeeds.derive(seed, "rank", p));
            int n = tokens[p];
            short[] x = new short[n * hidden];
            for (int i = 0; i < x.length; i++) x[i] = HalfFloats.floatToBf16((float) (r.nextDouble() * 4 - 2));
            int[] ids = new int[n * topK];
            float[] w = new float[n * topK];
            for (int t = 0; t < n; t++) {
                for (int k = 0; k < topK; k++) {
                    int e;
                    boolean taken;
                    do {
                        e = k == 0 && routing.kind() == Routing.HOT && r.nextDouble() < routing.p() ? routing.hot() : r.nextInt(experts);
                        taken = false;
                        for (int j = 0; j < k; j++) taken |= ids[t * topK + j] == e;
                        taken |= k > 0 && routing.kind() == Routing.HOT && e == routing.hot() && ids[t * topK] != e;
                    } while (taken && experts > topK);
                    ids[t * topK + k] = e;
                    w[t * topK + k] = (float) r.nextDouble();
                }
            }
            in[p] = new Inputs(n, x, ids, w);
        }
        return in;
    }

    static int[][] ids(Inputs[] in) {
        int[][] ids = new int[in.length][];
        for (int p = 0; p < in.length; p++) ids[p] = in[p].ids;
        return ids;
    }

    private static int maxRouted(Inputs[] in, int experts, int topK) {
        int[] routed = MoeReference.dispatch(ids(in), experts, topK, Integer.MAX_VALUE).routed();
        return Arrays.stream(routed).max().orElse(0);
    }

    private static int routedTo(Inputs[] in, int experts, int topK, int e) {
        return MoeReference.dispatch(ids(in), experts, topK, Integer.MAX_VALUE).routed()[e];
    }

    /** This rank's tokens, ids and weights ([maxTokens, ...], poison past its tokens) and a poisoned out: tensors the caller closes. */
    SymTensor[] upload(MoeConfig config, Inputs mine) {
        SymTensor[] t = new SymTensor[4];
        try {
            t[0] = heap.empty(DType.BF16, config.maxTokens(), config.hidden());
            t[1] = heap.empty(DType.I32, config.maxTokens(), config.topK());
            t[2] = heap.empty(DType.F32, config.maxTokens(), config.topK());
            t[3] = heap.empty(DType.BF16, config.maxTokens(), config.hidden());
            fill(config, mine, t);
            return t;
        } catch (RuntimeException | Error e) {
            closeAll(t);
            throw e;
        }
    }

    /** Writes {@code mine} into the tensors of {@link #upload} and poisons out. */
    void fill(MoeConfig config, Inputs mine, SymTensor[] t) {
        short[] x = new short[config.maxTokens() * config.hidden()];
        Arrays.fill(x, (short) -1);
        System.arraycopy(mine.x, 0, x, 0, mine.x.length);
        int[] ids = new int[config.maxTokens() * config.topK()];
        Arrays.fill(ids, POISON_ID);
        System.arraycopy(mine.ids, 0, ids, 0, mine.ids.length);
        float[] w = new float[ids.length];
        Arrays.fill(w, Float.NaN);
        System.arraycopy(mine.w, 0, w, 0, mine.w.length);
        t[0].copyFrom(shorts(x));
        t[1].copyFrom(ids);
        t[2].copyFrom(w);
        poison(t[3]);
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    long seed(String what, long... parts) {
        return TestSeeds.derive(runSeed, "moe/" + what, parts);
    }

    void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        iris.synchronize();
    }

    static ByteBuffer shorts(short[] values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * 2).order(ByteOrder.nativeOrder());
        b.asShortBuffer().put(values);
        return b;
    }

    static short[] bits(SymTensor t) {
        ByteBuffer b = ByteBuffer.allocateDirect((int) t.byteSize()).order(ByteOrder.nativeOrder());
        t.copyTo(b);
        b.flip();
        short[] out = new short[(int) (t.byteSize() / 2)];
        b.asShortBuffer().get(out);
        return out;
    }

    static void closeAll(SymTensor[] t) {
        for (int i = t.length - 1; i >= 0; i--) {
            if (t[i] != null) t[i].close();
        }
    }

    static void expectThrows(Failures f, Class<? extends RuntimeException> type, String fragment, Runnable call) {
        try {
            call.run();
            f.fail("expected " + type.getSimpleName() + " containing \"" + fragment + "\", nothing was thrown");
        } catch (RuntimeException e) {
            f.check(type.isInstance(e) && String.valueOf(e.getMessage()).contains(fragment),
                    () -> "expected " + type.getSimpleName() + " containing \"" + fragment + "\", got " + e);
        }
    }
}

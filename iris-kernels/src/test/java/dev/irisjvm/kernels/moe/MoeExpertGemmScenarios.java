package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.gpu.CudaGraph;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.gemm.DeviceMatrix;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;
import dev.irisjvm.kernels.moe.MoeExpertReference.LayerElement;
import dev.irisjvm.kernels.moe.MoeExpertReference.Row;
import dev.irisjvm.kernels.moe.MoeReference.Dispatch;
import dev.irisjvm.kernels.moe.MoeReference.Source;
import dev.irisjvm.kernels.moe.MoeScenarios.Inputs;
import dev.irisjvm.kernels.moe.MoeScenarios.Routing;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The experts' grouped GEMM and the expert layer with combine as the GEMM's epilogue ({@link
 * MoeExpertGemm}) on every rank of a real multi-GPU job (ranks may share a GPU), run by {@link
 * MoeExpertGemmGpuTest} through the launcher; the exit code is the number of failed scenarios. It
 * follows {@link MoeScenarios}' rules (fresh random inputs from the run seed, every output poisoned
 * first, inputs past a rank's tokens poisoned, checks collected and thrown at the end).
 *
 * <ul>
 * <li>moe_expert_gemm_*: dispatch, then {@link MoeExpertGemm#gemm}; each local expert's rows below
 *     its count against the double product of the token row it came from and the expert's weight
 *     ({@link MoeExpertReference#gemmBound}), rows past the count still poisoned. Uniform, one hot
 *     expert (DROP, most of its routes over the capacity), and empty routings. Then the same
 *     routing through {@link MoeExpertGemm#dispatchAndGemm} (the GEMM fed by the dispatch), which
 *     must give the same bits, poisoned rows included.</li>
 * <li>moe_expert_layer_*: the same routing dispatched three times, followed by (1) {@link
 *     MoeExpertGemm#gemmAndCombine}, (2) {@link MoeExpertGemm#gemm} + {@link MoeCombine#combine},
 *     (3) one {@link Gemm} per local expert (counts read back) + {@link MoeCombine#combine}. (1)
 *     must equal (2) bit for bit (the same accumulators, the same staging rows, the same sum); (2)'s
 *     expert rows are checked as above; (1) and (3) lie within the layer bound of the double
 *     reference ({@link MoeExpertReference}), and where (3)'s expert rows equal (2)'s bit for bit,
 *     (3) equals (1) bit for bit. (4) {@link MoeExpertGemm#forward} (dispatch, the GEMM fed by it,
 *     combine as its epilogue) must equal (1) bit for bit.</li>
 * <li>moe_expert_fed_large: both fed paths on a routing large enough that the GEMM starts while
 *     the dispatch is still copying (2048 tokens per rank, hidden 1024, 8 experts per rank),
 *     against the same calls in sequence, bit for bit, the sequence's expert rows against the
 *     double reference.</li>
 * <li>moe_expert_fed_graph_replay: forward captured into a CUDA graph (the fed GEMM's early start
 *     becomes a programmatic edge), replayed with new inputs; each replay against the double
 *     reference.</li>
 * </ul>
 */
public final class MoeExpertGemmScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "moe_expert_gemm_uniform",
            "moe_expert_gemm_one_hot_expert",
            "moe_expert_gemm_empty",
            "moe_expert_layer_uniform",
            "moe_expert_layer_one_hot_expert",
            "moe_expert_layer_empty",
            "moe_expert_layer_back_to_back",
            "moe_expert_fed_large",
            "moe_expert_fed_graph_replay",
            "moe_expert_gemm_misuse");

    private static final int TILE_M = Gemm.TILE_M;

    private final MoeScenarios base;

    MoeExpertGemmScenarios(Iris iris, long runSeed) {
        super(iris, iris.node());
        this.base = new MoeScenarios(iris, runSeed);
    }

    public static void main(String[] argv) throws Exception {
        MoeScenarios.runAll("moe expert gemm", SCENARIOS, (iris, runSeed) -> {
            MoeExpertGemmScenarios s = new MoeExpertGemmScenarios(iris, runSeed);
            Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
            bodies.put("moe_expert_gemm_uniform", s::gemmUniform);
            bodies.put("moe_expert_gemm_one_hot_expert", s::gemmOneHotExpert);
            bodies.put("moe_expert_gemm_empty", s::gemmEmpty);
            bodies.put("moe_expert_layer_uniform", s::layerUniform);
            bodies.put("moe_expert_layer_one_hot_expert", s::layerOneHotExpert);
            bodies.put("moe_expert_layer_empty", s::layerEmpty);
            bodies.put("moe_expert_layer_back_to_back", s::layerBackToBack);
            bodies.put("moe_expert_fed_large", s::fedLarge);
            bodies.put("moe_expert_fed_graph_replay", s::fedGraphReplay);
            bodies.put("moe_expert_gemm_misuse", s::misuse);
            return bodies;
        });
    }

    // =============================================================================================
    // the grouped GEMM
    // =============================================================================================

    /**
     * Uniform top-2 routing, different token counts per rank, K = 264 (a k-block past the last
     * whole one reads zeros); n = 384 (128-column tiles) and n = 256 (256-column tiles).
     */
    private void gemmUniform() {
        Failures f = new Failures();
        int hidden = 264, topK = 2, maxTokens = 300;
        int experts = 3 * world;
        Inputs[] in = base.inputs(base.seed("xg/uniform"), uneven(maxTokens, 37), hidden, experts, topK, uniform());
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxRouted(in, experts, topK)));
        gemmCase(f, "uniform n=384", config, in, 384);
        gemmCase(f, "uniform n=256", config, in, 256);
        f.throwIfAny();
    }

    /**
     * One hot expert (the last): 90% of the tokens put it first; DROP with a capacity of a third of
     * its routes rounded up to 128, so it is full and spans several tiles while the others use one.
     */
    private void gemmOneHotExpert() {
        Failures f = new Failures();
        int hidden = 256, topK = 2, maxTokens = 300;
        int experts = 4 * world;
        Inputs[] in = base.inputs(base.seed("xg/hot"), full(maxTokens), hidden, experts, topK, new Routing(Routing.HOT, experts - 1, 0.9));
        int[] routed = routed(in, experts, topK);
        int others = Arrays.stream(routed, 0, experts - 1).max().orElse(0);
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(Math.max(routed[experts - 1] / 3, others)))
                .withPolicy(OverflowPolicy.DROP);
        gemmCase(f, "one hot expert " + (experts - 1) + " (DROP, capacity " + config.capacity() + ")", config, in, 256);
        f.throwIfAny();
    }

    /** No tokens anywhere (no units: nothing may be written), then none on the even ranks, then one token on rank 0. */
    private void gemmEmpty() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 100;
        int experts = 2 * world;
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxTokens * topK * world));
        gemmCase(f, "all ranks empty", config, base.inputs(base.seed("xg/empty/all"), new int[world], hidden, experts, topK, uniform()),
                128);
        int[] evenEmpty = new int[world];
        for (int p = 0; p < world; p++) evenEmpty[p] = p % 2 == 0 ? 0 : maxTokens - p;
        gemmCase(f, "even ranks empty", config, base.inputs(base.seed("xg/empty/even"), evenEmpty, hidden, experts, topK, uniform()), 128);
        int[] one = new int[world];
        one[0] = 1;
        gemmCase(f, "one token on rank 0", config, base.inputs(base.seed("xg/empty/one"), one, hidden, experts, topK, uniform()), 256);
        f.throwIfAny();
    }

    /**
     * One dispatch and grouped GEMM on a fresh instance, the expert rows checked; then the GEMM fed
     * by the dispatch, against it bit for bit.
     */
    private void gemmCase(Failures f, String what, MoeConfig config, Inputs[] in, int n) {
        int l = config.experts() / world;
        Dispatch ref = MoeReference.dispatch(MoeScenarios.ids(in), config.experts(), config.topK(), config.capacity());
        HostMatrix w = weights("xg/w", config, n, rank);
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeExpertGemm experts = MoeExpertGemm.create(dispatch, n);
             SymTensor wt = heap.empty(DType.BF16, l, n, config.hidden()); SymTensor out = heap.empty(DType.BF16, l, config.capacity(), n);
             SymTensor fed = heap.empty(DType.BF16, l, config.capacity(), n)) {
            wt.copyFrom(w.values());
            SymTensor[] t = base.upload(config, in[rank]);
            try {
                base.poison(out);
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens(), stream);
                experts.gemm(wt, out, stream);
                noError(f, what + ": dispatch + gemm");
                short[] rows = MoeScenarios.bits(out);
                checkExpertRows(f, what + " (tile " + experts.tileN() + ")", config, ref, in, w, n, rows);

                base.poison(fed);
                experts.dispatchAndGemm(t[0], t[1], t[2], in[rank].tokens(), wt, fed, stream);
                noError(f, what + ": dispatchAndGemm");
                sameBits(f, what + ": dispatchAndGemm against dispatch + gemm", MoeScenarios.bits(fed), rows);
            } finally {
                MoeScenarios.closeAll(t);
            }
        }
    }

    /**
     * {@code got}: bits of [localExperts, capacity, n]. Row j below expert l's reference count
     * against the double product of its source's token row and the expert's weight; rows past it
     * still poisoned.
     */
    private void checkExpertRows(Failures f, String what, MoeConfig config, Dispatch ref, Inputs[] in, HostMatrix w, int n, short[] got) {
        int hidden = config.hidden();
        int capacity = config.capacity();
        int l = config.experts() / world;
        float[][] x = new float[world][];
        for (int p = 0; p < world; p++) x[p] = floats(in[p].x());
        int bad = 0;
        String first = null;
        for (int le = 0; le < l; le++) {
            List<Source> rows = ref.rows().get(rank * l + le);
            for (int j = 0; j < capacity; j++) {
                int at = (le * capacity + j) * n;
                if (j >= rows.size()) {
                    for (int c = 0; c < n; c++) {
                        if (got[at + c] != (short) -1) {
                            f.fail(what + ": expert " + (rank * l + le) + " row " + j + " past its " + rows.size() + " rows was written");
                            break;
                        }
                    }
                    continue;
                }
                Source src = rows.get(j);
                Row y = MoeExpertReference.row(x[src.rank()], src.route() / config.topK() * hidden, w.values(), le * n, n, hidden);
                for (int c = 0; c < n; c++) {
                    double g = HalfFloats.bf16ToFloat(got[at + c]);
                    double bound = MoeExpertReference.gemmBound(hidden, y.y()[c], y.abs()[c]);
                    if (!(Math.abs(g - y.y()[c]) <= bound) && bad++ == 0) {
                        first = "expert " + (rank * l + le) + " row " + j + " column " + c + ": " + g + ", expected " + y.y()[c] + " +- "
                                + bound;
                    }
                }
            }
        }
        if (bad > 0) f.fail(what + ": " + bad + " expert output elements outside the bound, first " + first);
    }

    // =============================================================================================
    // the expert layer: dispatch, GEMM with combine as its epilogue
    // =============================================================================================

    /** Uniform top-2 routing, different token counts per rank, hidden 256 (256-column tiles). */
    private void layerUniform() {
        Failures f = new Failures();
        int hidden = 256, topK = 2, maxTokens = 300;
        int experts = 2 * world;
        Inputs[] in = base.inputs(base.seed("xl/uniform"), uneven(maxTokens, 41), hidden, experts, topK, uniform());
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxRouted(in, experts, topK)));
        try (Gemm gemm = Gemm.create()) {
            layerCase(f, "uniform", config, in, gemm);
        }
        f.throwIfAny();
    }

    /** One hot expert (on rank 0), 90% of first choices, DROP over a capacity of a third of its routes; hidden 384 (128-column tiles). */
    private void layerOneHotExpert() {
        Failures f = new Failures();
        int hidden = 384, topK = 2, maxTokens = 200;
        int experts = 4 * world;
        Inputs[] in = base.inputs(base.seed("xl/hot"), full(maxTokens), hidden, experts, topK, new Routing(Routing.HOT, 0, 0.9));
        int hot = routed(in, experts, topK)[0];
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(hot / 3)).withPolicy(OverflowPolicy.DROP);
        try (Gemm gemm = Gemm.create()) {
            layerCase(f, "one hot expert 0 (DROP, capacity " + config.capacity() + ")", config, in, gemm);
        }
        f.throwIfAny();
    }

    /** No tokens anywhere, then tokens on the odd ranks only. */
    private void layerEmpty() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 64;
        int experts = 2 * world;
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxTokens * topK * world));
        int[] oddOnly = new int[world];
        for (int p = 0; p < world; p++) oddOnly[p] = p % 2 == 1 ? maxTokens - p : 0;
        try (Gemm gemm = Gemm.create()) {
            layerCase(f, "all ranks empty", config, base.inputs(base.seed("xl/empty/all"), new int[world], hidden, experts, topK, uniform()),
                    gemm);
            layerCase(f, "odd ranks only", config, base.inputs(base.seed("xl/empty/odd"), oddOnly, hidden, experts, topK, uniform()), gemm);
        }
        f.throwIfAny();
    }

    /** The three paths of the class comment on one fresh instance, everything checked. */
    private void layerCase(Failures f, String what, MoeConfig config, Inputs[] in, Gemm gemm) {
        int hidden = config.hidden();
        int capacity = config.capacity();
        int l = config.experts() / world;
        Dispatch ref = MoeReference.dispatch(MoeScenarios.ids(in), config.experts(), config.topK(), capacity);
        HostMatrix[] w = everyRanksWeights("xl/w", config);
        long slotBytes = (long) capacity * hidden * 2;
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeCombine combine = MoeCombine.create(dispatch);
             MoeExpertGemm experts = MoeExpertGemm.create(dispatch, hidden);
             SymTensor wt = heap.empty(DType.BF16, l, hidden, hidden); SymTensor grouped = heap.empty(DType.BF16, l, capacity, hidden);
             SymTensor separate = heap.empty(DType.BF16, l, capacity, hidden)) {
            wt.copyFrom(w[rank].values());
            SymTensor[] t = base.upload(config, in[rank]);
            try {
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens(), stream);
                experts.gemmAndCombine(wt, t[3], stream);
                noError(f, what + ": dispatch + gemmAndCombine");
                short[] fused = MoeScenarios.bits(t[3]);

                base.fill(config, in[rank], t);
                base.poison(grouped);
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens(), stream);
                experts.gemm(wt, grouped, stream);
                combine.combine(grouped, t[3], stream);
                noError(f, what + ": dispatch + gemm + combine");
                short[] sequential = MoeScenarios.bits(t[3]);
                short[] groupedRows = MoeScenarios.bits(grouped);

                base.fill(config, in[rank], t);
                base.poison(separate);
                dispatch.dispatch(t[0], t[1], t[2], in[rank].tokens(), stream);
                iris.synchronize();
                int[] counts = dispatch.counts().toIntArray();
                for (int le = 0; le < l; le++) {
                    if (counts[le] <= 0 || counts[le] > capacity) continue;  // the reference check below reports it
                    gemm.matmul(new DeviceMatrix(dispatch.received().deviceAddress() + le * slotBytes, DType.BF16, counts[le], hidden, hidden),
                            DeviceMatrix.contiguous(wt.deviceAddress() + (long) le * hidden * hidden * 2, DType.BF16, hidden, hidden),
                            GemmLayout.NK, 0, new DeviceMatrix(separate.deviceAddress() + le * slotBytes, DType.BF16, counts[le], hidden, hidden),
                            stream);
                }
                combine.combine(separate, t[3], stream);
                noError(f, what + ": dispatch + Gemm per expert + combine");
                short[] perExpert = MoeScenarios.bits(t[3]);
                short[] separateRows = MoeScenarios.bits(separate);

                sameBits(f, what + ": gemmAndCombine against gemm + MoeCombine", fused, sequential);
                checkExpertRows(f, what + ": gemm's expert rows", config, ref, in, w[rank], hidden, groupedRows);
                checkLayer(f, what + ": gemmAndCombine", config, ref, in, w, fused);
                checkLayer(f, what + ": Gemm per expert + MoeCombine", config, ref, in, w, perExpert);
                if (Arrays.equals(groupedRows, separateRows)) {
                    sameBits(f, what + ": gemmAndCombine against Gemm per expert + MoeCombine (the same expert rows)", fused, perExpert);
                }

                base.fill(config, in[rank], t);
                experts.forward(t[0], t[1], t[2], in[rank].tokens(), wt, t[3], stream);
                noError(f, what + ": forward");
                sameBits(f, what + ": forward against dispatch + gemmAndCombine", MoeScenarios.bits(t[3]), fused);
            } finally {
                MoeScenarios.closeAll(t);
            }
        }
    }

    /**
     * Three layer calls on one instance with no synchronization between them (uniform, one hot
     * expert, the even ranks empty), each into its own output: dispatch + gemmAndCombine, forward,
     * dispatch + gemmAndCombine; all checked at the end.
     */
    private void layerBackToBack() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 160;
        int experts = 2 * world;
        int calls = 3;
        List<Inputs[]> all = new ArrayList<>();
        for (int c = 0; c < calls; c++) {
            int[] tokens = uneven(maxTokens, 13 * (c + 1));
            if (c == 2) for (int p = 0; p < world; p += 2) tokens[p] = 0;
            Routing routing = c == 1 ? new Routing(Routing.HOT, world % experts, 0.95) : uniform();
            Inputs[] in = base.inputs(base.seed("xl/b2b", c), tokens, hidden, experts, topK, routing);
            all.add(in);
        }
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, capacityFor(all, experts, topK));
        HostMatrix[] w = everyRanksWeights("xl/b2b/w", config);
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeExpertGemm layer = MoeExpertGemm.create(dispatch, hidden);
             SymTensor wt = heap.empty(DType.BF16, experts / world, hidden, hidden)) {
            wt.copyFrom(w[rank].values());
            List<SymTensor[]> ops = new ArrayList<>();
            try {
                for (int c = 0; c < calls; c++) ops.add(base.upload(config, all.get(c)[rank]));
                for (int c = 0; c < calls; c++) {  // the middle call fed, between two that are not
                    SymTensor[] t = ops.get(c);
                    int tokens = all.get(c)[rank].tokens();
                    if (c == 1) {
                        layer.forward(t[0], t[1], t[2], tokens, wt, t[3], stream);
                    } else {
                        dispatch.dispatch(t[0], t[1], t[2], tokens, stream);
                        layer.gemmAndCombine(wt, t[3], stream);
                    }
                }
                noError(f, "back to back");
                for (int c = 0; c < calls; c++) {
                    Inputs[] in = all.get(c);
                    Dispatch ref = MoeReference.dispatch(MoeScenarios.ids(in), experts, topK, config.capacity());
                    checkLayer(f, "call " + c, config, ref, in, w, MoeScenarios.bits(ops.get(c)[3]));
                }
            } finally {
                for (SymTensor[] t : ops) MoeScenarios.closeAll(t);
            }
        }
        f.throwIfAny();
    }

    /**
     * The fed paths where the overlap is real: 2048 tokens per rank, top-2 of 8 experts per rank,
     * hidden 1024 (each rank receives about 4096 rows, 32 tiles, sent by a sixth of the SMs while
     * the GEMM runs). dispatchAndGemm and forward against dispatch + gemm and dispatch +
     * gemmAndCombine on the same inputs, bit for bit; the sequence's expert rows against the double
     * reference.
     */
    private void fedLarge() {
        Failures f = new Failures();
        int hidden = 1024, topK = 2, maxTokens = 2048;
        int experts = 8 * world;
        int l = experts / world;
        Inputs[] in = base.inputs(base.seed("xf/large"), full(maxTokens), hidden, experts, topK, uniform());
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxRouted(in, experts, topK)));
        Dispatch ref = MoeReference.dispatch(MoeScenarios.ids(in), experts, topK, config.capacity());
        HostMatrix w = weights("xf/w", config, hidden, rank);
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeExpertGemm expertGemm = MoeExpertGemm.create(dispatch, hidden);
             SymTensor wt = heap.empty(DType.BF16, l, hidden, hidden);
             SymTensor rows = heap.empty(DType.BF16, l, config.capacity(), hidden);
             SymTensor fedRows = heap.empty(DType.BF16, l, config.capacity(), hidden)) {
            wt.copyFrom(w.values());
            SymTensor[] t = base.upload(config, in[rank]);
            try {
                base.poison(rows);
                dispatch.dispatch(t[0], t[1], t[2], maxTokens, stream);
                expertGemm.gemm(wt, rows, stream);
                dispatch.dispatch(t[0], t[1], t[2], maxTokens, stream);
                expertGemm.gemmAndCombine(wt, t[3], stream);
                noError(f, "large: in sequence");
                short[] expected = MoeScenarios.bits(rows);
                short[] layer = MoeScenarios.bits(t[3]);

                base.poison(fedRows);
                base.poison(t[3]);
                expertGemm.dispatchAndGemm(t[0], t[1], t[2], maxTokens, wt, fedRows, stream);
                noError(f, "large: dispatchAndGemm");
                sameBits(f, "large: dispatchAndGemm against dispatch + gemm", MoeScenarios.bits(fedRows), expected);
                expertGemm.forward(t[0], t[1], t[2], maxTokens, wt, t[3], stream);
                noError(f, "large: forward");
                sameBits(f, "large: forward against dispatch + gemmAndCombine", MoeScenarios.bits(t[3]), layer);
                checkExpertRows(f, "large: gemm's expert rows", config, ref, in, w, hidden, expected);
            } finally {
                MoeScenarios.closeAll(t);
            }
        }
        f.throwIfAny();
    }

    /**
     * forward captured once on a stream of its own, then replayed three times with new inputs
     * written between replays (uniform, one hot expert, uniform; the token counts are captured), no
     * host barrier between ranks; each replay's output against the double reference.
     */
    private void fedGraphReplay() throws Exception {
        Failures f = new Failures();
        int hidden = 256, topK = 2, maxTokens = 256;
        int experts = 2 * world;
        int[] tokens = new int[world];
        for (int p = 0; p < world; p++) tokens[p] = maxTokens - 9 * p;
        List<Inputs[]> all = new ArrayList<>();
        for (int rep = 0; rep < 3; rep++) {
            Routing routing = rep == 1 ? new Routing(Routing.HOT, 1, 0.8) : uniform();
            Inputs[] in = base.inputs(base.seed("xf/graph", rep), tokens, hidden, experts, topK, routing);
            all.add(in);
        }
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, capacityFor(all, experts, topK));
        HostMatrix[] w = everyRanksWeights("xf/graph/w", config);
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeExpertGemm layer = MoeExpertGemm.create(dispatch, hidden);
             SymTensor wt = heap.empty(DType.BF16, experts / world, hidden, hidden); Stream s = Stream.create()) {
            wt.copyFrom(w[rank].values());
            SymTensor[] t = base.upload(config, all.get(0)[rank]);
            try {
                CudaGraph graph;
                s.beginCapture();
                try {
                    layer.forward(t[0], t[1], t[2], tokens[rank], wt, t[3], s);
                } finally {
                    graph = s.endCapture();
                }
                try (CudaGraph g = graph) {
                    for (int rep = 0; rep < all.size(); rep++) {
                        Inputs[] in = all.get(rep);
                        base.fill(config, in[rank], t);
                        g.launch(s);
                        s.synchronize();
                        iris.checkDeviceStatus();
                        Dispatch ref = MoeReference.dispatch(MoeScenarios.ids(in), experts, topK, config.capacity());
                        checkLayer(f, "replay " + rep, config, ref, in, w, MoeScenarios.bits(t[3]));
                    }
                }
            } finally {
                MoeScenarios.closeAll(t);
            }
        }
        f.throwIfAny();
    }

    /**
     * {@code got}: this rank's layer output, bits of [maxTokens, hidden]: each token's element
     * against the double {@code sum_k a_k (x W_e^T)} over its delivered routes within {@link
     * LayerElement#bound}; rows past the tokens still poisoned.
     */
    private void checkLayer(Failures f, String what, MoeConfig config, Dispatch ref, Inputs[] in, HostMatrix[] w, short[] got) {
        int hidden = config.hidden();
        int topK = config.topK();
        int l = config.experts() / world;
        Inputs mine = in[rank];
        float[] x = floats(mine.x());
        int bad = 0;
        String first = null;
        for (int t = 0; t < mine.tokens(); t++) {
            LayerElement[] sums = new LayerElement[hidden];
            for (int c = 0; c < hidden; c++) sums[c] = new LayerElement();
            for (int k = 0; k < topK; k++) {
                int route = t * topK + k;
                if (ref.routes()[rank][route] < 0) continue;
                int e = mine.ids()[route];
                Row y = MoeExpertReference.row(x, t * hidden, w[e / l].values(), e % l * hidden, hidden, hidden);
                for (int c = 0; c < hidden; c++) sums[c].add(mine.w()[route], y.y()[c], y.abs()[c], hidden);
            }
            for (int c = 0; c < hidden; c++) {
                double g = HalfFloats.bf16ToFloat(got[t * hidden + c]);
                double bound = sums[c].bound(topK);
                if (!(Math.abs(g - sums[c].ref()) <= bound) && bad++ == 0) {
                    first = "token " + t + " element " + c + ": " + g + ", expected " + sums[c].ref() + " +- " + bound;
                }
            }
        }
        if (bad > 0) f.fail(what + ": " + bad + " elements outside the layer bound, first " + first);
        for (int i = mine.tokens() * hidden; i < got.length; i++) {
            if (got[i] != (short) -1) {
                f.fail(what + ": wrote out row " + i / hidden + ", past this rank's " + mine.tokens() + " tokens");
                break;
            }
        }
    }

    // =============================================================================================
    // what the Java side refuses
    // =============================================================================================

    /**
     * Alike on every rank, nothing launched, the instances usable afterwards: a capacity that is not
     * a multiple of 128, an n that is not one of 128, gemmAndCombine with no dispatch before it or
     * with n != hidden, weights of the wrong shape, an output on the receive buffer; forward with
     * n != hidden or too many tokens, dispatchAndGemm into the receive buffer (none of which leaves a
     * dispatch to combine).
     */
    private void misuse() {
        Failures f = new Failures();
        int hidden = 128, topK = 2, maxTokens = 16;
        int experts = 2 * world;
        int l = experts / world;
        MoeConfig odd = MoeConfig.of(hidden, experts, topK, maxTokens, 200);
        try (MoeDispatch dispatch = MoeDispatch.create(iris, odd)) {
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "the dispatch's capacity is 200; expected a multiple of 128",
                    () -> MoeExpertGemm.create(dispatch, hidden));
        }
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, roundUp(maxTokens * topK * world));
        try (MoeDispatch dispatch = MoeDispatch.create(iris, config); MoeExpertGemm wide = MoeExpertGemm.create(dispatch, 256);
             MoeExpertGemm layer = MoeExpertGemm.create(dispatch, hidden);
             SymTensor x = heap.zeros(DType.BF16, maxTokens, hidden); SymTensor ids = heap.zeros(DType.I32, maxTokens, topK);
             SymTensor rw = heap.zeros(DType.F32, maxTokens, topK); SymTensor y = heap.zeros(DType.BF16, maxTokens, hidden);
             SymTensor w = heap.zeros(DType.BF16, l, hidden, hidden); SymTensor wide256 = heap.zeros(DType.BF16, l, hidden, 256)) {
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "n is 100; expected a positive multiple of 128",
                    () -> MoeExpertGemm.create(dispatch, 100));
            MoeScenarios.expectThrows(f, IllegalStateException.class, "no dispatch to combine", () -> layer.gemmAndCombine(w, y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "this MoeExpertGemm has n = 256 output columns per expert",
                    () -> wide.forward(x, ids, rw, maxTokens, w, y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "numTokens is 17; expected 0 to maxTokens (16)",
                    () -> layer.forward(x, ids, rw, maxTokens + 1, w, y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "out overlaps the dispatch's receive buffer",
                    () -> layer.dispatchAndGemm(x, ids, rw, maxTokens, w, dispatch.received(), stream));
            MoeScenarios.expectThrows(f, IllegalStateException.class, "no dispatch to combine", () -> layer.gemmAndCombine(w, y, stream));
            dispatch.dispatch(x, ids, rw, stream);  // every token to expert 0, weight 0
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "this MoeExpertGemm has n = 256 output columns per expert",
                    () -> wide.gemmAndCombine(w, y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "weights has shape [" + l + ", 128, 256]; expected [" + l
                    + ", 256, 128]", () -> wide.gemm(wide256, y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "out overlaps the dispatch's receive buffer",
                    () -> layer.gemm(w, dispatch.received(), stream));
            layer.gemmAndCombine(w, y, stream);
            noError(f, "misuse: the call after the refused ones");
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // helpers
    // =============================================================================================

    private void noError(Failures f, String what) {
        IrisDeviceException error = ExpectedDeviceError.synchronize(iris, System.nanoTime()).error();
        f.check(error == null, () -> what + ": raised " + error);
    }

    private static void sameBits(Failures f, String what, short[] a, short[] b) {
        int differ = 0;
        int first = -1;
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i] && differ++ == 0) first = i;
        }
        if (differ > 0) {
            int i = first;
            f.fail(what + ": " + differ + " elements differ, first at " + i + ": " + HalfFloats.bf16ToFloat(a[i]) + " against "
                    + HalfFloats.bf16ToFloat(b[i]));
        }
    }

    /** Every rank's expert weights of a layer with n = hidden (each rank regenerates all of them for the reference). */
    private HostMatrix[] everyRanksWeights(String what, MoeConfig config) {
        HostMatrix[] w = new HostMatrix[world];
        for (int p = 0; p < world; p++) w[p] = weights(what, config, config.hidden(), p);
        return w;
    }

    /** The capacity that holds every route of every one of {@code calls}: the most any expert gets, in whole tiles. */
    private static int capacityFor(List<Inputs[]> calls, int experts, int topK) {
        return roundUp(calls.stream().mapToInt(in -> maxRouted(in, experts, topK)).max().orElse(0));
    }

    /** Rank p's expert weights, [localExperts * n, hidden], the same on every rank that regenerates them. */
    private HostMatrix weights(String what, MoeConfig config, int n, int p) {
        return HostMatrix.random(base.seed(what, config.hidden(), n, p), DType.BF16, config.experts() / world * n, config.hidden());
    }

    private int[] uneven(int maxTokens, int step) {
        int[] tokens = new int[world];
        for (int p = 0; p < world; p++) tokens[p] = maxTokens - step * p % maxTokens;
        return tokens;
    }

    private int[] full(int maxTokens) {
        int[] tokens = new int[world];
        Arrays.fill(tokens, maxTokens);
        return tokens;
    }

    private static Routing uniform() {
        return new Routing(Routing.UNIFORM, -1, 0);
    }

    private static int[] routed(Inputs[] in, int experts, int topK) {
        return MoeReference.dispatch(MoeScenarios.ids(in), experts, topK, Integer.MAX_VALUE).routed();
    }

    /** The most routes any expert got. */
    private static int maxRouted(Inputs[] in, int experts, int topK) {
        return Arrays.stream(routed(in, experts, topK)).max().orElse(0);
    }

    /** Rows rounded up to whole GEMM tiles, at least one. */
    private static int roundUp(int rows) {
        return Math.max(1, (rows + TILE_M - 1) / TILE_M) * TILE_M;
    }

    private static float[] floats(short[] bf16) {
        float[] v = new float[bf16.length];
        for (int i = 0; i < v.length; i++) v[i] = HalfFloats.bf16ToFloat(bf16[i]);
        return v;
    }
}

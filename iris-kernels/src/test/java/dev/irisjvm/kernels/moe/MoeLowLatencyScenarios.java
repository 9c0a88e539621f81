package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.testing.ExpectedDeviceError;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.moe.MoeReference.Dispatch;
import dev.irisjvm.kernels.moe.MoeScenarios.Expert;
import dev.irisjvm.kernels.moe.MoeScenarios.Inputs;
import dev.irisjvm.kernels.moe.MoeScenarios.Routing;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The low-latency MoE mode ({@link MoeLowLatency}) on every rank of a real multi-GPU job, run by
 * {@link MoeLowLatencyGpuTest} through the launcher; the exit code is the number of failed
 * scenarios. It follows {@link MoeScenarios}' rules (fresh random inputs from the run seed, every
 * output poisoned, the host's double reference) and uses its inputs and combine check: the dispatch
 * against {@link MoeReference#regions} bit for bit (counts, every row and its route, the rows past
 * each count still poisoned), combine within {@link MoeReference#combineBound}. One difference:
 * peers write into this rank's regions as soon as they dispatch, with no handshake, so a scenario
 * poisons the receive buffer and then meets the other ranks before its first dispatch.
 */
public final class MoeLowLatencyScenarios extends TeamScenarios {
    /** Every scenario, in run order; the JUnit side expects exactly these names. */
    public static final List<String> SCENARIOS = List.of(
            "moe_ll_uniform",
            "moe_ll_one_hot_expert",
            "moe_ll_empty_ranks",
            "moe_ll_back_to_back",
            "moe_ll_graph_replay",
            "moe_ll_misuse",
            "moe_ll_timeout_names_site");

    /** Inputs, poisoning, uploads and the combine check. */
    private final MoeScenarios base;

    private MoeLowLatencyScenarios(Iris iris, long runSeed) {
        super(iris, iris.node());
        this.base = new MoeScenarios(iris, runSeed);
    }

    public static void main(String[] argv) throws Exception {
        MoeScenarios.runAll("moe_ll", SCENARIOS, (iris, runSeed) -> {
            MoeLowLatencyScenarios s = new MoeLowLatencyScenarios(iris, runSeed);
            Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
            bodies.put("moe_ll_uniform", s::uniform);
            bodies.put("moe_ll_one_hot_expert", s::oneHotExpert);
            bodies.put("moe_ll_empty_ranks", s::emptyRanks);
            bodies.put("moe_ll_back_to_back", s::backToBack);
            bodies.put("moe_ll_graph_replay", s::graphReplay);
            bodies.put("moe_ll_misuse", s::misuse);
            bodies.put("moe_ll_timeout_names_site", s::timeoutNamesSite);  // last: it leaves a device error behind on rank 0
            return bodies;
        });
    }

    // =============================================================================================
    // scenarios
    // =============================================================================================

    /**
     * Uniform routing at decode sizes (up to 64 and 128 tokens, different per rank): top-4 of 4
     * experts a rank at hidden 1024, top-2 of 2 at hidden 264 (not a multiple of a row group's 256);
     * each case twice on fresh instances, with the same bits both times.
     */
    private void uniform() {
        Failures f = new Failures();
        for (int[] c : new int[][] {{1024, 4, 4, 64}, {264, 2, 2, 128}}) {
            int hidden = c[0], perRank = c[1], topK = c[2], maxTokens = c[3];
            int experts = perRank * world;
            int[] tokens = new int[world];
            for (int p = 0; p < world; p++) tokens[p] = maxTokens - 37 * p % maxTokens;
            String what = "uniform H=" + hidden + " E=" + experts + " k=" + topK;
            Inputs[] in = base.inputs(base.seed("ll/uniform", hidden, topK), tokens, hidden, experts, topK,
                    new Routing(Routing.UNIFORM, -1, 0));
            MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, 1);
            short[] first = runCase(f, what, config, in, Expert.SCALED);
            short[] second = runCase(f, what + " (again)", config, in, Expert.SCALED);
            f.check(Arrays.equals(first, second), () -> what + ": combine gave different bits on a second run of the same inputs");
        }
        f.throwIfAny();
    }

    /** One hot expert on the last rank (90% of first choices), then every token of every rank to expert 0, top-1. */
    private void oneHotExpert() {
        Failures f = new Failures();
        int hidden = 512, topK = 2, maxTokens = 96;
        int experts = 4 * world;
        int[] tokens = new int[world];
        Arrays.fill(tokens, maxTokens);
        Inputs[] in = base.inputs(base.seed("ll/hot"), tokens, hidden, experts, topK, new Routing(Routing.HOT, experts - 1, 0.9));
        runCase(f, "one hot expert " + (experts - 1), MoeConfig.of(hidden, experts, topK, maxTokens, 1), in, Expert.SCALED);
        Inputs[] all = base.inputs(base.seed("ll/hot/all"), tokens, hidden, experts, 1, new Routing(Routing.HOT, 0, 1.0));
        runCase(f, "every token to expert 0, top-1", MoeConfig.of(hidden, experts, 1, maxTokens, 1), all, Expert.SCALED);
        f.throwIfAny();
    }

    /** No tokens on the even ranks (they only receive and return), then none anywhere, then one token on rank 0 only. */
    private void emptyRanks() {
        Failures f = new Failures();
        int hidden = 256, topK = 2, maxTokens = 32;
        int experts = 2 * world;
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, 1);
        Routing uniform = new Routing(Routing.UNIFORM, -1, 0);
        int[] evenEmpty = new int[world];
        for (int p = 0; p < world; p++) evenEmpty[p] = p % 2 == 0 ? 0 : maxTokens - p;
        runCase(f, "even ranks empty", config, base.inputs(base.seed("ll/empty/even"), evenEmpty, hidden, experts, topK, uniform),
                Expert.SCALED);
        runCase(f, "all ranks empty", config, base.inputs(base.seed("ll/empty/all"), new int[world], hidden, experts, topK, uniform),
                Expert.SCALED);
        int[] one = new int[world];
        one[0] = 1;
        runCase(f, "one token on rank 0", config, base.inputs(base.seed("ll/empty/one"), one, hidden, experts, topK, uniform),
                Expert.SCALED);
        f.throwIfAny();
    }

    /**
     * Five dispatch + combine calls on one instance, each with its own inputs and routing (uniform,
     * hot, odd ranks empty), identity experts (combine of the receive buffer), with no
     * synchronization between them: every call writes regions a peer read in the call before.
     */
    private void backToBack() {
        int hidden = 256, topK = 2, maxTokens = 64;
        MoeConfig config = MoeConfig.of(hidden, 2 * world, topK, maxTokens, 1);
        base.backToBack("ll/b2b", config, MoeExchange::lowLatency, in -> reference(in, config));
    }

    /**
     * dispatch + combine (identity experts) captured once on a stream of its own, then replayed
     * four times with new inputs written between replays (same token counts: they are captured);
     * every replay gets a fresh epoch from the device counter and is checked.
     */
    private void graphReplay() throws Exception {
        int hidden = 128, topK = 2, maxTokens = 48;
        MoeConfig config = MoeConfig.of(hidden, 2 * world, topK, maxTokens, 1);
        base.graphReplay("ll/graph", config, MoeExchange::lowLatency, in -> reference(in, config));
    }

    /**
     * What the Java side refuses, alike on every rank, with the instance usable afterwards: a combine
     * with no dispatch, a second dispatch before the first one's combine, too many tokens, expert
     * outputs of the wrong shape, experts the node does not divide (at creation).
     */
    private void misuse() {
        Failures f = new Failures();
        int hidden = 64, topK = 2, maxTokens = 16;
        int experts = 2 * world;
        MoeConfig config = MoeConfig.of(hidden, experts, topK, maxTokens, 1);
        if (world > 1) {
            MoeConfig odd = MoeConfig.of(hidden, experts + 1, topK, maxTokens, 1);
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "experts is " + (experts + 1) + ", which the node's " + world
                    + " ranks do not divide", () -> MoeLowLatency.create(iris, odd));
        }
        SymmetricHeap h = iris.heap();
        try (MoeLowLatency ll = MoeLowLatency.create(iris, config); SymTensor x = h.zeros(DType.BF16, maxTokens, hidden);
             SymTensor ids = h.zeros(DType.I32, maxTokens, topK); SymTensor w = h.zeros(DType.F32, maxTokens, topK);
             SymTensor y = h.zeros(DType.BF16, maxTokens, hidden)) {
            MoeScenarios.expectThrows(f, IllegalStateException.class, "no dispatch to combine", () -> ll.combine(ll.received(), y, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "numTokens is 17; expected 0 to maxTokens (16)",
                    () -> ll.dispatch(x, ids, w, 17, stream));
            ll.dispatch(x, ids, w, maxTokens, stream);  // all to expert 0, weight 0
            MoeScenarios.expectThrows(f, IllegalStateException.class, "the last dispatch has no combine yet",
                    () -> ll.dispatch(x, ids, w, maxTokens, stream));
            MoeScenarios.expectThrows(f, IllegalArgumentException.class, "expertOutputs has shape [16, 64]", () -> ll.combine(x, y, stream));
            ll.combine(ll.received(), y, stream);
            iris.synchronize();
            int[] counts = ll.counts().toIntArray();
            for (int src = 0; src < world; src++) {
                int want = rank == 0 ? maxTokens * topK : 0;  // every id 0: expert 0, on rank 0
                int s = src;
                f.check(counts[src] == want, () -> "misuse: the call after the refused ones: local expert 0 got " + counts[s]
                        + " rows from rank " + s + "; expected " + want);
            }
        }
        f.throwIfAny();
    }

    /**
     * Only rank 0 dispatches on a fresh instance: its last block gives up at wait site 9307 (the
     * peers' rows never come), and its synchronize names the site, which {@link MoeSites#describe}
     * explains.
     */
    private void timeoutNamesSite() {
        Failures f = new Failures();
        f.check(String.valueOf(MoeSites.describe(MoeSites.LL_ROWS)).startsWith("MoE low-latency dispatch: waiting for a source's rows"),
                () -> "MoeSites.describe(" + MoeSites.LL_ROWS + ") = " + MoeSites.describe(MoeSites.LL_ROWS));
        if (world < 2) {
            f.throwIfAny();
            return;
        }
        int hidden = 64, topK = 1, maxTokens = 8;
        SymmetricHeap h = iris.heap();
        try (MoeLowLatency lone = MoeLowLatency.create(iris, MoeConfig.of(hidden, world, topK, maxTokens, 1));
             SymTensor x = h.zeros(DType.BF16, maxTokens, hidden); SymTensor ids = h.zeros(DType.I32, maxTokens, topK);
             SymTensor w = h.zeros(DType.F32, maxTokens, topK)) {
            if (rank == 0) {
                long start = System.nanoTime();
                lone.dispatch(x, ids, w, stream);
                ExpectedDeviceError got = ExpectedDeviceError.synchronize(iris, start);
                String site = "wait site " + MoeSites.LL_ROWS;
                f.check(got.error() != null && got.error().getMessage().contains(site),
                        () -> "lone dispatch: expected a timeout at " + site + ", got " + got.error());
                f.check(got.seconds() < 4 * MoeScenarios.DEVICE_TIMEOUT_MS / 1000.0, () -> "lone dispatch: it took " + got.seconds() + " s");
            }
            iris.hostBarrier();  // rank 0's kernel is over before any rank frees the instance
        }
        f.throwIfAny();
    }

    // =============================================================================================
    // one checked case
    // =============================================================================================

    /** Combine's reference: every valid route delivered (a region holds all of its source's routes). */
    private static Dispatch reference(Inputs[] in, MoeConfig config) {
        return MoeReference.dispatch(MoeScenarios.ids(in), config.experts(), config.topK(), Integer.MAX_VALUE);
    }

    /** One dispatch, experts and combine on a fresh instance, everything checked; returns this rank's combine output bits. */
    private short[] runCase(Failures f, String what, MoeConfig config, Inputs[] in, Expert expert) {
        int hidden = config.hidden();
        int l = config.experts() / world;
        List<List<List<Integer>>> regions = MoeReference.regions(MoeScenarios.ids(in), config.experts());
        short[] result;
        try (MoeLowLatency ll = MoeLowLatency.create(iris, config);
             SymTensor expertOut = iris.heap().empty(DType.BF16, l, world, ll.regionRows(), hidden)) {
            SymTensor[] t = base.upload(config, in[rank]);
            try {
                base.poison(ll.received());
                base.poison(ll.receivedRoutes());
                base.poison(ll.counts());
                iris.hostBarrier();  // peers write into this rank's regions as soon as they dispatch
                ll.dispatch(t[0], t[1], t[2], in[rank].tokens(), stream);
                IrisDeviceException error = ExpectedDeviceError.synchronize(iris, System.nanoTime()).error();
                f.check(error == null, () -> what + ": dispatch raised " + error);
                checkDispatch(f, what, config, regions, in, ll);
                // The experts, on the host: rows past the counts stay NaN.
                // Region le * world + src holds local expert le's rows from rank src.
                short[] y = MoeScenarios.expertOutputs(MoeScenarios.bits(ll.received()), ll.counts().toIntArray(), ll.regionRows(),
                        hidden, region -> rank * l + region / world, expert);
                expertOut.copyFrom(MoeScenarios.shorts(y));
                ll.combine(expertOut, t[3], stream);
                IrisDeviceException late = ExpectedDeviceError.synchronize(iris, System.nanoTime()).error();
                f.check(late == null, () -> what + ": combine raised " + late);
                result = MoeScenarios.bits(t[3]);
                base.checkCombine(f, what, config, reference(in, config), in, expert, result);
            } finally {
                MoeScenarios.closeAll(t);
            }
        }
        return result;
    }

    /** Each region's count, rows and routes against the reference, and the rows past each count still poisoned. */
    private void checkDispatch(Failures f, String what, MoeConfig config, List<List<List<Integer>>> regions, Inputs[] in,
                               MoeLowLatency ll) {
        int hidden = config.hidden();
        int rows = ll.regionRows();
        int l = ll.localExperts();
        int[] counts = ll.counts().toIntArray();
        int[] routes = ll.receivedRoutes().toIntArray();
        short[] recv = MoeScenarios.bits(ll.received());
        for (int le = 0; le < l; le++) {
            int e = rank * l + le;
            for (int src = 0; src < world; src++) {
                List<Integer> want = regions.get(e).get(src);
                int region = le * world + src;
                int source = src;
                f.check(counts[region] == want.size(), () -> what + ": expert " + e + " got " + counts[region] + " rows from rank "
                        + source + "; expected " + want.size());
                for (int j = 0; j < rows; j++) {
                    int slot = region * rows + j;
                    int row = j;
                    if (j < want.size()) {
                        int route = want.get(j);
                        f.check(routes[slot] == route, () -> what + ": expert " + e + " row " + row + " from rank " + source
                                + " says route " + routes[slot] + "; expected " + route);
                        short[] x = in[src].x();
                        int from = route / config.topK() * hidden;
                        if (!Arrays.equals(recv, slot * hidden, (slot + 1) * hidden, x, from, from + hidden)) {
                            f.fail(what + ": expert " + e + " row " + row + " from rank " + source + " differs from its token "
                                    + route / config.topK());
                        }
                    } else {
                        boolean poisoned = routes[slot] == -1;
                        for (int h = 0; h < hidden && poisoned; h++) poisoned = recv[slot * hidden + h] == (short) -1;
                        f.check(poisoned, () -> what + ": expert " + e + " row " + row + " of rank " + source + "'s region, past its "
                                + want.size() + " rows, was written");
                    }
                }
            }
        }
    }
}

package dev.irisjvm.kernels.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.Team;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.KernelArgs;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.ScenarioConfigs;
import dev.irisjvm.kernels.TeamScenarios;
import dev.irisjvm.kernels.fused.GemmAllScatter;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.nccl.NcclTeams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job of several nodes, simulated on one machine by bin/iris-run {@code --simulate-nodes} (each
 * node's ranks with their own IRIS_NODE_ID and NCCL_HOSTID; NCCL talks between nodes over
 * loopback sockets), driven by {@link MultiNodeGpuTest} at 2 nodes x 1, 2 x 2 and 4 x 1 ranks:
 * <ul>
 * <li>{@code nodes_teams}: world, node and rail teams and the device context are what the
 *     launcher's node variables say they must be;</li>
 * <li>{@code nodes_heap_stays_in_node}: the heap's host API refuses a rank outside the node, naming
 *     it; the node collectives refuse a node of one rank;</li>
 * <li>{@code nodes_translate_off_node}: device code's translate gives nullptr for ranks outside the
 *     node (other nodes' ranks, -1) and the mapped address inside it, and can_reach agrees;</li>
 * <li>{@code nodes_world_all_reduce}: the hierarchical all-reduce ({@link WorldCollectives}) for
 *     bf16/f16/f32 x sum/max/min/avg on fresh random inputs, outputs poisoned first, against a
 *     double reference ({@link WorldReference}) and against flat NCCL on the world communicator;</li>
 * <li>{@code nodes_world_all_reduce_pipelined}: the same with chunks of 64 KiB, so that its levels
 *     run in up to eight chunks on three streams ({@link PipelinedAllReduce}), on sizes whose last
 *     chunk is short;</li>
 * <li>{@code nodes_world_all_gather}: the two-level all-gather, bit for bit against every rank's
 *     input and flat NCCL, for every dtype it moves;</li>
 * <li>{@code nodes_world_reduce_scatter}: the two-level reduce-scatter, as the all-reduce;</li>
 * <li>{@code nodes_data_parallel_step}: a gradient all-reduce across nodes on one stream while a
 *     tensor-parallel GEMM + all-scatter runs inside each node on another, both in flight at once;
 *     each result equal to the same call made alone (skipped on nodes of one rank, where there is
 *     no tensor parallelism);</li>
 * <li>{@code nodes_world_broadcast}: rail broadcast then node broadcast from every root, bit for
 *     bit against the root's input and flat NCCL's broadcast;</li>
 * <li>{@code nodes_world_all_to_all}: equal blocks, node blocks on the heap and the others in one
 *     NCCL group, bit for bit against every rank's input;</li>
 * <li>{@code nodes_world_all_to_all_v}: random per-pair counts (some zero) that every rank derives
 *     from the run seed, bit for bit; elements of {@code out} past the received ones keep their
 *     poison.</li>
 * </ul>
 */
public final class MultiNodeScenarios extends TeamScenarios {
    /** The scenarios in the order every rank runs them. */
    public static final List<String> SCENARIOS = List.of("nodes_teams", "nodes_heap_stays_in_node",
            "nodes_translate_off_node", "nodes_world_all_reduce", "nodes_world_all_reduce_pipelined", "nodes_world_all_gather", "nodes_world_reduce_scatter",
            "nodes_data_parallel_step", "nodes_world_broadcast", "nodes_world_all_to_all", "nodes_world_all_to_all_v");
    static final long HEAP_BYTES = 512L << 20;
    static final long DEVICE_TIMEOUT_MS = 10_000;
    private static final long POISON_U64 = 0xDEAD_BEEF_DEAD_BEEFL;
    private static final int POISON_I32 = 0x7EAD_BEEF;

    private final KernelModule deviceApi;
    private final KernelArgs args;
    private final long runSeed;

    private MultiNodeScenarios(Iris iris, KernelModule deviceApi, KernelArgs args, long runSeed) {
        super(iris, iris.world());
        this.runSeed = runSeed;
        this.deviceApi = deviceApi;
        this.args = args;
    }

    public static void main(String[] argv) throws Exception {
        IrisConfig config = ScenarioConfigs.of(HEAP_BYTES, Duration.ofMillis(DEVICE_TIMEOUT_MS));
        ScenarioJob.run(config, (iris, runSeed) -> {
            try (KernelLibrary lib = KernelLibrary.forClasspath(); KernelArgs args = new KernelArgs()) {
                System.out.println("nodes: rank " + iris.rank() + " of " + iris.worldSize() + " on node " + iris.nodeIndex()
                        + " of " + iris.nodeCount() + " (" + iris.node() + "), run seed " + runSeed + " (IRIS_TEST_SEED="
                        + runSeed + " repeats these inputs)");
                MultiNodeScenarios s = new MultiNodeScenarios(iris, lib.module("device_api_test"), args, runSeed);
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("nodes_teams", s::teams);
                bodies.put("nodes_heap_stays_in_node", s::heapStaysInNode);
                bodies.put("nodes_translate_off_node", s::translateOffNode);
                bodies.put("nodes_world_all_reduce", s::worldAllReduce);
                bodies.put("nodes_world_all_reduce_pipelined", s::worldAllReducePipelined);
                bodies.put("nodes_world_all_gather", s::worldAllGather);
                bodies.put("nodes_world_reduce_scatter", s::worldReduceScatter);
                bodies.put("nodes_data_parallel_step", s::dataParallelStep);
                bodies.put("nodes_world_broadcast", s::worldBroadcast);
                bodies.put("nodes_world_all_to_all", s::worldAllToAll);
                bodies.put("nodes_world_all_to_all_v", s::worldAllToAllV);
                return ScenarioRunner.runTable(bodies, SCENARIOS, iris::hostBarrier);
            }
        });
    }

    private static int env(String name) {
        return Integer.parseInt(System.getenv(name));
    }

    /** The teams follow from the launcher's numbering: node R holds ranks R L .. R L + L - 1. */
    private void teams() {
        Failures f = new Failures();
        int nodeRank = env("IRIS_NODE_RANK");
        int nodes = env("IRIS_NODE_COUNT");
        int local = env("IRIS_LOCAL_RANK");
        int size = env("IRIS_LOCAL_WORLD_SIZE");
        f.check(("simulated-node-" + nodeRank).equals(System.getenv("IRIS_NODE_ID")),
                () -> "IRIS_NODE_ID is " + System.getenv("IRIS_NODE_ID") + ": not a simulated node");
        f.check(iris.nodeCount() == nodes && iris.nodeIndex() == nodeRank,
                () -> "node " + iris.nodeIndex() + " of " + iris.nodeCount() + ", the launcher says " + nodeRank + " of " + nodes);
        int[] nodeRanks = new int[size];
        for (int l = 0; l < size; l++) nodeRanks[l] = nodeRank * size + l;
        int[] railRanks = new int[nodes];
        for (int j = 0; j < nodes; j++) railRanks[j] = j * size + local;
        Team node = iris.node();
        Team rail = iris.rail();
        f.check(Arrays.equals(node.worldRanks(), nodeRanks) && node.index() == local,
                () -> "node team " + node + ", expected world ranks " + Arrays.toString(nodeRanks) + " with index " + local);
        f.check(Arrays.equals(rail.worldRanks(), railRanks) && rail.index() == nodeRank,
                () -> "rail team " + rail + ", expected world ranks " + Arrays.toString(railRanks) + " with index " + nodeRank);
        f.check(iris.world().size() == world && iris.world().index() == rank, () -> "world team " + iris.world());
        DeviceContext ctx = iris.deviceContext();
        f.check(ctx.rank() == local && ctx.worldSize() == size,
                () -> "device context rank " + ctx.rank() + " of " + ctx.worldSize() + ", expected the node's " + local + " of " + size);
        Team tp = node.split(size);
        f.check(tp.equals(new Team(node.name() + " / split " + size + " #0", nodeRanks, local)), () -> "split(" + size + ") " + tp);
        for (int i = 0; i < size; i++) {
            final int ii = i;
            f.check(node.translate(i, iris.world()) == nodeRanks[i], () -> "node index " + ii + " is not world rank " + nodeRanks[ii]);
        }
        f.throwIfAny();
    }

    /** Host-side heap operations take node ranks and refuse the others, naming them. */
    private void heapStaysInNode() {
        Failures f = new Failures();
        int size = iris.node().size();
        try (SymTensor t = heap.zeros(DType.F32, 64)) {
            expectRejected(f, () -> t.whole().on(size), "RemoteTile(target rank): rank " + size + " is out of range: not a rank of this node");
            expectRejected(f, () -> t.whole().on(-1), "rank -1 is out of range: not a rank of this node");
            expectRejected(f, () -> t.deviceAddress(size), "SymTensor.deviceAddress: rank " + size + " is out of range: not a rank of this node");
            expectRejected(f, () -> iris.deviceContext().translate(t.deviceAddress(), size), "DeviceContext.translate: rank " + size);
            expectRejected(f, () -> iris.pciAddressOf(size), "pciAddressOf: rank " + size);
            if (size > 1) {
                t.whole().on((iris.node().index() + 1) % size);  // a node peer is accepted
            }
        }
        if (size == 1) {
            expectRejected(f, () -> Collectives.create(iris), "Collectives serves the node team");
        }
        f.throwIfAny();
    }

    private void expectRejected(Failures f, Runnable call, String expected) {
        try {
            call.run();
            f.fail("accepted a rank outside the node; expected: " + expected);
        } catch (IllegalArgumentException e) {
            f.check(e.getMessage().startsWith("rank " + rank + ": ") || e.getMessage().startsWith("node rank "),
                    () -> "does not start with the rank: " + e.getMessage());
            f.check(e.getMessage().contains(expected), () -> "'" + e.getMessage() + "' does not say '" + expected + "'");
        }
    }

    /** A kernel asks translate and can_reach about ranks inside and outside the node. */
    private void translateOffNode() {
        Failures f = new Failures();
        int size = iris.node().size();
        List<Integer> probes = new ArrayList<>();
        for (int l = 0; l < size; l++) probes.add(l);
        probes.addAll(List.of(-1, size, size + 1, world - 1, Integer.MAX_VALUE, Integer.MIN_VALUE));
        int count = probes.size();
        try (SymTensor sym = heap.zeros(DType.I64, 1); SymTensor p = heap.empty(DType.I32, count);
             SymTensor addresses = heap.empty(DType.I64, count); SymTensor reachable = heap.empty(DType.I32, count)) {
            p.copyFrom(probes.stream().mapToInt(Integer::intValue).toArray());
            long[] poisonAddresses = new long[count];
            Arrays.fill(poisonAddresses, POISON_U64);
            addresses.copyFrom(poisonAddresses);
            int[] poisonFlags = new int[count];
            Arrays.fill(poisonFlags, POISON_I32);
            reachable.copyFrom(poisonFlags);
            deviceApi.kernel("dat_translate_off_node").launch(LaunchShape.of(1, 32), stream,
                    args.clear().putBytes(iris.deviceContext().bytes(), DeviceContext.ALIGNMENT).putLong(sym.deviceAddress())
                            .putLong(p.deviceAddress()).putInt(count).putLong(addresses.deviceAddress())
                            .putLong(reachable.deviceAddress()));
            iris.synchronize();
            long[] a = addresses.toLongArray();
            int[] r = reachable.toIntArray();
            for (int i = 0; i < count; i++) {
                int probe = probes.get(i);
                boolean inNode = probe >= 0 && probe < size;
                long expected = inNode ? iris.deviceContext().translate(sym.deviceAddress(), probe) : 0;
                final int ii = i;
                f.check(a[i] == expected, () -> "translate to rank " + probe + " gave 0x" + Long.toHexString(a[ii])
                        + ", expected " + (inNode ? "0x" + Long.toHexString(expected) : "nullptr (outside the node of " + size + ")"));
                f.check(r[i] == (inNode ? 1 : 0), () -> "can_reach(" + probe + ") gave " + r[ii] + ", expected " + (inNode ? 1 : 0));
            }
        }
        f.throwIfAny();
    }

    /** The hierarchical all-reduce against a double reference and against flat NCCL on the world. */
    private void worldAllReduce() {
        Failures f = new Failures();
        int size = iris.node().size();
        int nodes = iris.nodeCount();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            NcclTeams nccl = NcclTeams.of(iris);
            System.out.println("nodes: " + wc + " over " + nccl.version());
            for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
                for (ReduceOp op : ReduceOp.values()) {
                    for (long shard : new long[] {1, 4099, t == DType.F32 ? 1 << 18 : 1 << 19}) {
                        allReduceCase(f, wc, nccl, t, op, shard * size, nodes, size);
                    }
                }
            }
            iris.synchronize();
        }
        f.throwIfAny();
    }

    /** Chunks of 64 KiB: up to eight chunks, the last one short, against the double reference and flat NCCL. */
    private void worldAllReducePipelined() {
        Failures f = new Failures();
        int size = iris.node().size();
        int nodes = iris.nodeCount();
        try (WorldCollectives wc = WorldCollectives.create(iris, WorldCollectives.Options.defaults().withPipelineChunkBytes(64 << 10))) {
            NcclTeams nccl = NcclTeams.of(iris);
            for (DType t : new DType[] {DType.BF16, DType.F32}) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                    for (long shard : new long[] {PipelinedAllReduce.ALIGN_ELEMENTS * 40 + 3, 1 << 18}) {
                        allReduceCase(f, wc, nccl, t, op, shard * size, nodes, size);
                    }
                }
            }
            iris.synchronize();
        }
        f.throwIfAny();
    }

    private void allReduceCase(Failures f, WorldCollectives wc, NcclTeams nccl, DType t, ReduceOp op, long n, int nodes,
                               int size) {
        String what = "world allReduce " + t + " " + op + " n=" + n + " on " + nodes + "x" + size;
        long[] seeds = new long[world];
        for (int p = 0; p < world; p++) seeds[p] = TestSeeds.derive(runSeed, "world_all_reduce", t.ordinal(), op.ordinal(), n, p);
        float[] got;
        float[] flat;
        try (SymTensor in = heap.randn(seeds[rank], t, n); SymTensor out = heap.empty(t, n); SymTensor ref = heap.empty(t, n)) {
            poison(out);
            poison(ref);
            wc.allReduce(in, out, op, stream);
            nccl.world().allReduce(in.deviceAddress(), ref.deviceAddress(), n, t, op, stream);
            iris.synchronize();
            got = out.toFloatArray();
            flat = ref.toFloatArray();
        }
        CclReference.Accumulator acc = new CclReference.Accumulator(op, (int) n);
        for (int p = 0; p < world; p++) {
            try (SymTensor x = heap.randn(seeds[p], t, n)) {  // collective: every rank regenerates every input
                acc.add(x.toFloatArray());
            }
        }
        f.add(WorldReference.check(what, got, acc, op, t, nodes, size));
        f.add(WorldReference.checkVsNccl(what, got, flat, acc, op, t, nodes, size));
    }

    /** The two-level all-gather: every rank's input in world-rank order, bit for bit, and flat NCCL's. */
    private void worldAllGather() {
        Failures f = new Failures();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            NcclTeams nccl = NcclTeams.of(iris);
            for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
                for (long n : new long[] {1, 4099, 1 << 17}) {
                    String what = "world allGather " + t + " n=" + n;
                    long[] seeds = new long[world];
                    for (int p = 0; p < world; p++) seeds[p] = TestSeeds.derive(runSeed, "world_all_gather", t.ordinal(), n, p);
                    float[] got;
                    float[] flat;
                    try (SymTensor in = heap.randn(seeds[rank], t, n); SymTensor out = heap.empty(t, world * n);
                         SymTensor ref = heap.empty(t, world * n)) {
                        poison(out);
                        poison(ref);
                        wc.allGather(in, out, stream);
                        nccl.world().allGather(in.deviceAddress(), ref.deviceAddress(), n, t, stream);
                        iris.synchronize();
                        got = out.toFloatArray();
                        flat = ref.toFloatArray();
                    }
                    for (int p = 0; p < world; p++) {
                        try (SymTensor x = heap.randn(seeds[p], t, n)) {  // collective: every rank regenerates every input
                            float[] expected = x.toFloatArray();
                            f.add(CclReference.checkBits(what + ": rank " + p + "'s block", got, (int) (p * n), expected, 0, (int) n));
                            f.add(CclReference.checkBits(what + ": NCCL's rank " + p + " block", flat, (int) (p * n), expected, 0,
                                    (int) n));
                        }
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /** The two-level reduce-scatter against a double reference and flat NCCL. */
    private void worldReduceScatter() {
        Failures f = new Failures();
        int nodes = iris.nodeCount();
        int size = iris.node().size();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            NcclTeams nccl = NcclTeams.of(iris);
            for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
                for (ReduceOp op : ReduceOp.values()) {
                    for (long m : new long[] {1, 4099, 1 << 16}) {
                        String what = "world reduceScatter " + t + " " + op + " m=" + m + " on " + nodes + "x" + size;
                        long total = m * world;
                        long[] seeds = new long[world];
                        for (int p = 0; p < world; p++) {
                            seeds[p] = TestSeeds.derive(runSeed, "world_reduce_scatter", t.ordinal(), op.ordinal(), m, p);
                        }
                        float[] got;
                        float[] flat;
                        try (SymTensor in = heap.randn(seeds[rank], t, total); SymTensor out = heap.empty(t, m);
                             SymTensor ref = heap.empty(t, m)) {
                            poison(out);
                            poison(ref);
                            wc.reduceScatter(in, out, op, stream);
                            nccl.world().reduceScatter(in.deviceAddress(), ref.deviceAddress(), m, t, op, stream);
                            iris.synchronize();
                            got = out.toFloatArray();
                            flat = ref.toFloatArray();
                        }
                        CclReference.Accumulator acc = new CclReference.Accumulator(op, (int) m);
                        for (int p = 0; p < world; p++) {
                            try (SymTensor x = heap.randn(seeds[p], t, total)) {
                                acc.add(x.toFloatArray(), (int) (rank * m));
                            }
                        }
                        f.add(WorldReference.check(what, got, acc, op, t, nodes, size));
                        f.add(WorldReference.checkVsNccl(what, got, flat, acc, op, t, nodes, size));
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /**
     * A data-parallel step beside tensor parallelism: the gradient all-reduce across nodes (pipelined,
     * so NCCL and the node collectives run on streams of their own) on one stream, and inside each
     * node a GEMM + all-scatter on another, launched back to back so that both are in flight. Each
     * result must equal, bit for bit, the same call made alone before: neither may disturb the other
     * (workspaces, barriers, SMs), and neither may wait forever for the other.
     */
    private void dataParallelStep() {
        int size = iris.node().size();
        if (size == 1) {
            throw ScenarioRunner.skip("nodes of one rank have no tensor parallelism inside a node");
        }
        Failures f = new Failures();
        int m = 256;
        int nLocal = 128;
        int k = 256;
        long gradN = (1L << 19) * size;
        long seed = TestSeeds.derive(runSeed, "data_parallel_step", rank);
        try (WorldCollectives wc = WorldCollectives.create(iris, WorldCollectives.Options.defaults().withPipelineChunkBytes(128 << 10));
             GemmAllScatter tp = GemmAllScatter.create(iris, m, nLocal, k);
             Stream tpStream = Stream.create();
             SymTensor grad = heap.randn(seed, DType.BF16, gradN);
             SymTensor sumAlone = heap.empty(DType.BF16, gradN);
             SymTensor sum = heap.empty(DType.BF16, gradN);
             SymTensor a = heap.randn(seed + 1, DType.BF16, m, k);
             SymTensor w = heap.randn(seed + 2, DType.BF16, nLocal, k);
             SymTensor cAlone = heap.empty(DType.BF16, m, (long) nLocal * size);
             SymTensor c = heap.empty(DType.BF16, m, (long) nLocal * size)) {
            poison(sumAlone);
            poison(sum);
            poison(cAlone);
            poison(c);
            wc.allReduce(grad, sumAlone, ReduceOp.AVG, stream);
            iris.synchronize();
            tp.run(a, w, GemmLayout.NK, null, cAlone, stream);
            iris.synchronize();
            iris.hostBarrier();
            wc.allReduce(grad, sum, ReduceOp.AVG, stream);
            tp.run(a, w, GemmLayout.NK, null, c, tpStream);
            tpStream.synchronize();
            iris.synchronize();
            f.add(CclReference.checkBits("gradient all-reduce beside the tensor-parallel GEMM", sum.toFloatArray(), 0,
                    sumAlone.toFloatArray(), 0, (int) gradN));
            f.add(CclReference.checkBits("GEMM + all-scatter beside the gradient all-reduce", c.toFloatArray(), 0,
                    cAlone.toFloatArray(), 0, (int) c.numel()));
            iris.hostBarrier();
        }
        f.throwIfAny();
    }

    /** From every root: the root's input on every rank, bit for bit, and what flat NCCL's broadcast gives. */
    private void worldBroadcast() {
        Failures f = new Failures();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            NcclTeams nccl = NcclTeams.of(iris);
            for (DType t : new DType[] {DType.BF16, DType.F32}) {
                for (long n : new long[] {1, 4099, 1 << 17}) {
                    for (int root = 0; root < world; root++) {
                        String what = "world broadcast " + t + " n=" + n + " root " + root;
                        long seed = TestSeeds.derive(runSeed, "world_broadcast", t.ordinal(), n, root);
                        float[] got;
                        float[] flat;
                        float[] expected;
                        try (SymTensor x = heap.randn(seed, t, n); SymTensor buf = heap.empty(t, n); SymTensor ref = heap.empty(t, n)) {
                            expected = x.toFloatArray();
                            poison(buf);
                            poison(ref);
                            if (rank == root) {
                                Memcpy.deviceToDevice(buf.deviceAddress(), x.deviceAddress(), x.byteSize(), stream);
                                Memcpy.deviceToDevice(ref.deviceAddress(), x.deviceAddress(), x.byteSize(), stream);
                            }
                            wc.broadcast(buf, root, stream);
                            nccl.world().broadcast(ref.deviceAddress(), ref.deviceAddress(), n, t, root, stream);
                            iris.synchronize();
                            got = buf.toFloatArray();
                            flat = ref.toFloatArray();
                        }
                        f.add(CclReference.checkBits(what, got, 0, expected, 0, (int) n));
                        f.add(CclReference.checkBits(what + " (flat NCCL)", flat, 0, expected, 0, (int) n));
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /** Equal blocks: block r of out holds block (this rank) of rank r's input, bit for bit. */
    private void worldAllToAll() {
        Failures f = new Failures();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            for (DType t : new DType[] {DType.BF16, DType.F32}) {
                for (long m : new long[] {1, 4099, 1 << 16}) {
                    String what = "world allToAll " + t + " m=" + m;
                    long[] seeds = new long[world];
                    for (int p = 0; p < world; p++) seeds[p] = TestSeeds.derive(runSeed, "world_all_to_all", t.ordinal(), m, p);
                    float[] got;
                    try (SymTensor in = heap.randn(seeds[rank], t, m * world); SymTensor out = heap.empty(t, m * world)) {
                        poison(out);
                        wc.allToAll(in, out, stream);
                        iris.synchronize();
                        got = out.toFloatArray();
                    }
                    for (int p = 0; p < world; p++) {
                        try (SymTensor x = heap.randn(seeds[p], t, m * world)) {  // collective: every rank regenerates every input
                            f.add(CclReference.checkBits(what + ": block from rank " + p, got, (int) (p * m), x.toFloatArray(),
                                    (int) (rank * m), (int) m));
                        }
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /** Per-pair counts from the run seed (one in seven zero): every received block bit for bit, the rest of out untouched. */
    private void worldAllToAllV() {
        Failures f = new Failures();
        try (WorldCollectives wc = WorldCollectives.create(iris)) {
            for (DType t : new DType[] {DType.BF16, DType.F32}) {
                for (int maxCount : new int[] {7, 5000}) {
                    String what = "world allToAllV " + t + " counts < " + maxCount;
                    long[][] c = new long[world][world];  // c[p][q]: elements p sends to q
                    long[] sent = new long[world];
                    long[] seeds = new long[world];
                    for (int p = 0; p < world; p++) {
                        seeds[p] = TestSeeds.derive(runSeed, "world_all_to_all_v", t.ordinal(), maxCount, p);
                        for (int q = 0; q < world; q++) {
                            long h = TestSeeds.mix64(TestSeeds.derive(runSeed, "world_all_to_all_v_counts", maxCount, p, q));
                            c[p][q] = Math.floorMod(h, 7) == 0 ? 0 : Math.floorMod(h >>> 8, maxCount);
                            sent[p] += c[p][q];
                        }
                    }
                    long[] recvCounts = new long[world];
                    long[] receivedBy = new long[world];
                    for (int q = 0; q < world; q++) {
                        recvCounts[q] = c[q][rank];
                        for (int r = 0; r < world; r++) receivedBy[r] += c[q][r];
                    }
                    // Symmetric tensors: every rank allocates the largest sizes, and at least three elements of
                    // out stay past what any rank receives.
                    long inSize = Math.max(1, Arrays.stream(sent).max().getAsLong());
                    long outSize = Arrays.stream(receivedBy).max().getAsLong() + 3;
                    float[] got;
                    try (SymTensor in = heap.randn(seeds[rank], t, inSize); SymTensor out = heap.empty(t, outSize)) {
                        poison(out);
                        wc.allToAllV(in, c[rank].clone(), out, recvCounts, stream);
                        iris.synchronize();
                        got = out.toFloatArray();
                    }
                    int at = 0;
                    for (int q = 0; q < world; q++) {
                        long from = 0;
                        for (int r = 0; r < rank; r++) from += c[q][r];
                        try (SymTensor x = heap.randn(seeds[q], t, inSize)) {
                            f.add(CclReference.checkBits(what + ": block from rank " + q, got, at, x.toFloatArray(), (int) from,
                                    (int) c[q][rank]));
                        }
                        at += (int) c[q][rank];
                    }
                    for (int i = at; i < outSize; i++) {
                        final int ii = i;
                        f.check(Float.isNaN(got[i]), () -> what + ": out[" + ii + "] past the received elements was written: " + got[ii]);
                    }
                }
            }
        }
        f.throwIfAny();
    }

    /** All bytes 0xFF: NaN in bf16, f16 and f32, so an element nothing wrote fails every comparison. */
    private void poison(SymTensor t) {
        Memcpy.memset(t.deviceAddress(), 0xFF, t.byteSize(), stream);
        iris.synchronize();
    }
}

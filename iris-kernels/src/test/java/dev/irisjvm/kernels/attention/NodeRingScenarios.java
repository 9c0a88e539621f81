package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioJob;
import dev.irisjvm.core.testing.ScenarioRunner;
import dev.irisjvm.core.testing.TestSeeds;
import dev.irisjvm.kernels.attention.AttentionScenarios.RingCase;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Ring attention across nodes ({@link RingAttention} over {@link Iris#world()}), run by
 * MultiNodeGpuTest on simulated nodes: the sources on this rank's node come from its heap, the
 * others by NCCL. Each rank's rows of O and of the log-sum-exp against the CPU reference, for
 * zig-zag causal and contiguous sharding, BF16 and F16; a second call must give the same bits (the
 * workspace and the NCCL transfers are reused). On one node the ring is the node's, which
 * AttentionGpuTest covers: the scenario is skipped.
 */
public final class NodeRingScenarios {
    public static final List<String> SCENARIOS = List.of("nodes_ring_attention");

    private NodeRingScenarios() {}

    public static void main(String[] argv) throws Exception {
        ScenarioJob.run(IrisConfig.fromEnvironment().withHeapSize(512L << 20), (iris, runSeed) -> {
            try (Attention attention = Attention.create()) {
                System.out.println("nodes-ring: rank " + iris.rank() + " of " + iris.worldSize() + " on " + iris.nodeCount()
                        + " nodes, run seed " + runSeed + " (IRIS_TEST_SEED=" + runSeed + " repeats these inputs)");
                Map<String, ScenarioRunner.Scenario> bodies = new LinkedHashMap<>();
                bodies.put("nodes_ring_attention", () -> ringAcrossNodes(iris, attention, runSeed));
                int failed = ScenarioRunner.runTable(bodies, SCENARIOS, iris::hostBarrier);
                iris.synchronize();
                return failed;
            }
        });
    }

    private static void ringAcrossNodes(Iris iris, Attention attention, long runSeed) {
        if (iris.nodeCount() == 1) {
            throw ScenarioRunner.skip("one node: the ring is the node's (ring_vs_reference of AttentionGpuTest)");
        }
        int world = iris.worldSize();
        int rank = iris.rank();
        SymmetricHeap heap = iris.heap();
        Failures f = new Failures();
        for (RingCase c : List.of(new RingCase(DType.BF16, 2, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, world),
                new RingCase(DType.BF16, 1, 4, 1, 256, 64, false, Sharding.CONTIGUOUS, world),
                new RingCase(DType.F16, 1, 4, 2, 256, 128, true, Sharding.ZIG_ZAG, world))) {
            long seed = TestSeeds.derive(runSeed, "nodes-ring", AttentionScenarios.stable(c));  // alike on every rank
            int s = c.total();
            float[] q = AttentionReference.randomNormal(seed, c.dtype(), c.b() * c.hq() * s * c.d());
            float[] k = AttentionReference.randomNormal(seed + 1, c.dtype(), c.b() * c.hkv() * s * c.d());
            float[] v = AttentionReference.randomNormal(seed + 2, c.dtype(), c.b() * c.hkv() * s * c.d());
            try (SymTensor tq = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tk = heap.empty(c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor tv = heap.empty(c.dtype(), c.b(), c.hkv(), c.shard(), c.d());
                 SymTensor to = heap.empty(c.dtype(), c.b(), c.hq(), c.shard(), c.d());
                 SymTensor tl = heap.empty(DType.F32, c.b(), c.hq(), c.shard());
                 RingAttention ring = RingAttention.create(iris, attention, c.shardProblem(), c.sharding(), iris.world())) {
                tq.copyFrom(AttentionScenarios.shardOf(q, c.b(), c.hq(), c.d(), c, rank));
                tk.copyFrom(AttentionScenarios.shardOf(k, c.b(), c.hkv(), c.d(), c, rank));
                tv.copyFrom(AttentionScenarios.shardOf(v, c.b(), c.hkv(), c.d(), c, rank));
                String what = c.describe() + " over " + iris.nodeCount() + " nodes";
                float[][] first = run(iris, ring, tq, tk, tv, to, tl);
                f.add(AttentionScenarios.compareShard(what, c, rank, q, k, v, first[0], first[1], 1).failure());
                float[][] second = run(iris, ring, tq, tk, tv, to, tl);
                f.add(AttentionScenarios.sameBits(what + ": second call, O", second[0], first[0]));
                f.add(AttentionScenarios.sameBits(what + ": second call, lse", second[1], first[1]));
            }
        }
        f.throwIfAny();
    }

    /** O and the log-sum-exp of one call, both poisoned (all bits set: NaN) before it. */
    private static float[][] run(Iris iris, RingAttention ring, SymTensor q, SymTensor k, SymTensor v, SymTensor o, SymTensor lse) {
        Memcpy.memset(o.deviceAddress(), 0xFF, o.byteSize(), iris.stream());
        Memcpy.memset(lse.deviceAddress(), 0xFF, lse.byteSize(), iris.stream());
        ring.forward(q, k, v, o, lse, iris.stream());
        iris.synchronize();
        return new float[][] {o.toFloatArray(), lse.toFloatArray()};
    }
}

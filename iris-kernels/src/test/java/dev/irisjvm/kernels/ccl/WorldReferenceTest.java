package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The hierarchical all-reduce's bound holds for the computation it describes, simulated on the CPU
 * in the element type (node sums in float rounded once, then the node results summed in the type
 * one rounding at a time, as NCCL's ring does), and a result off by more fails.
 */
class WorldReferenceTest {
    private static float round(float v, DType t) {
        return switch (t) {
            case BF16 -> HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(v));
            case F16 -> HalfFloats.f16ToFloat(HalfFloats.floatToF16(v));
            default -> v;
        };
    }

    /** Hierarchical SUM or AVG of x[rank][i] on nodes of consecutive ranks, in the order NCCL's ring might take. */
    private static float[] simulate(float[][] x, int nodes, int nodeSize, ReduceOp op, DType t, int start) {
        int n = x[0].length;
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            float[] node = new float[nodes];
            for (int j = 0; j < nodes; j++) {
                float s = 0;
                for (int l = 0; l < nodeSize; l++) s += x[j * nodeSize + l][i];
                node[j] = round(op == ReduceOp.AVG ? s * (1f / nodeSize) : s, t);
            }
            float acc = op == ReduceOp.AVG ? round(node[start] * (1f / nodes), t) : node[start];
            for (int k = 1; k < nodes; k++) {
                float v = node[(start + k) % nodes];
                acc = round(acc + (op == ReduceOp.AVG ? round(v * (1f / nodes), t) : v), t);
            }
            out[i] = acc;
        }
        return out;
    }

    @Test
    void theBoundHoldsForTheTwoLevelComputationAndCatchesAWrongOne() {
        SplittableRandom random = new SplittableRandom(24);
        int[][] layouts = {{2, 1}, {2, 2}, {4, 1}, {2, 4}, {4, 2}};
        for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                for (int[] layout : layouts) {
                    int nodes = layout[0], size = layout[1], world = nodes * size, n = 4096;
                    float[][] x = new float[world][n];
                    CclReference.Accumulator acc = new CclReference.Accumulator(op, n);
                    for (int r = 0; r < world; r++) {
                        for (int i = 0; i < n; i++) x[r][i] = round((float) random.nextGaussian(), t);
                        acc.add(x[r]);
                    }
                    String what = t + " " + op + " " + nodes + "x" + size;
                    for (int start = 0; start < nodes; start++) {
                        assertNull(WorldReference.check(what, simulate(x, nodes, size, op, t, start), acc, op, t, nodes, size));
                    }
                    float[] wrong = simulate(x, nodes, size, op, t, 0);
                    wrong[7] += (float) (4 * WorldReference.bound(op, t, nodes, size, acc.exact(7), acc.absSum(7))) + 1e-3f;
                    assertNotNull(WorldReference.check(what, wrong, acc, op, t, nodes, size), what);
                }
            }
        }
    }

    @Test
    void maxAndMinMustEqualNcclBitForBitAndPoisonNeverPasses() {
        CclReference.Accumulator acc = new CclReference.Accumulator(ReduceOp.MAX, 2);
        acc.add(new float[] {1f, -2f});
        acc.add(new float[] {0.5f, -1f});
        assertEquals(0, WorldReference.bound(ReduceOp.MAX, DType.BF16, 2, 1, 1, 1));
        assertNull(WorldReference.checkVsNccl("max", new float[] {1f, -1f}, new float[] {1f, -1f}, acc, ReduceOp.MAX,
                DType.BF16, 2, 1));
        assertNotNull(WorldReference.checkVsNccl("max", new float[] {1f, -1f}, new float[] {1f, Math.nextUp(-1f)}, acc,
                ReduceOp.MAX, DType.BF16, 2, 1));
        String poisoned = WorldReference.check("max", new float[] {Float.NaN, -1f}, acc, ReduceOp.MAX, DType.BF16, 2, 1);
        assertTrue(poisoned.contains("NaN (unwritten?)"), poisoned);
    }
}

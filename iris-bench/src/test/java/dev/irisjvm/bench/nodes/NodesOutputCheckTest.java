package dev.irisjvm.bench.nodes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.ccl.CclOp;
import dev.irisjvm.core.DType;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class NodesOutputCheckTest {

    @Test
    void reductionsAgreeWithinTheirRoundingAndAMissingRankDoesNot() {
        int world = 4;
        Random r = new Random(24);
        float[][] inputs = new float[world][1000];
        for (float[] x : inputs) {
            for (int i = 0; i < x.length; i++) x[i] = bf16(r.nextFloat() * 2 - 1);
        }
        float[] flat = new float[1000];
        float[] twoLevel = new float[1000];
        float[] missing = new float[1000];
        for (int i = 0; i < flat.length; i++) {
            float f = inputs[0][i];
            for (int p = 1; p < world; p++) f = bf16(f + inputs[p][i]);  // NCCL: world - 1 roundings to BF16
            flat[i] = f;
            float node0 = bf16(inputs[0][i] + inputs[1][i]);  // two nodes of two: a float sum rounded once per node
            float node1 = bf16(inputs[2][i] + inputs[3][i]);
            twoLevel[i] = bf16(node0 + node1);
            missing[i] = bf16(node0 + bf16(inputs[2][i]));
        }
        assertNull(NodesOutputCheck.compare(true, DType.BF16, world, twoLevel, flat));
        String why = NodesOutputCheck.compare(true, DType.BF16, world, missing, flat);
        assertTrue(why != null && why.contains("allowed difference " + NodesOutputCheck.bound(DType.BF16, world)), why);
        assertEquals(2.0 * 16 / 256, NodesOutputCheck.bound(DType.BF16, world));
    }

    @Test
    void movedDataMustBeEqualBitForBit() {
        float[] flat = {1f, -2f, 0.5f};
        assertNull(NodesOutputCheck.compare(false, DType.F32, 2, flat.clone(), flat));
        assertEquals("element 2 is 0.50000006, flat NCCL's 0.5 (moved data must be equal bit for bit)",
                NodesOutputCheck.compare(false, DType.F32, 2, new float[] {1f, -2f, Math.nextUp(0.5f)}, flat));
        assertEquals("element 0 is NaN, flat NCCL's 1.0 (moved data must be equal bit for bit)",
                NodesOutputCheck.compare(false, DType.F32, 2, new float[] {Float.NaN, -2f, 0.5f}, flat));
        assertEquals("2 elements against flat NCCL's 3", NodesOutputCheck.compare(false, DType.F32, 2, new float[2], flat));
    }

    @Test
    void optionsNameWhatIsWrong() {
        NodesOptions o = new NodesOptions();
        new CommandLine(o).parseArgs("--sizes", "1m,16m", "--ops", "all_reduce,all_to_all", "--dtype", "F32");
        o.validate();
        assertEquals(List.of(1L << 20, 16L << 20), o.sizes());
        assertEquals(List.of(CclOp.ALL_REDUCE, CclOp.ALL_TO_ALL), o.ops());
        assertEquals(DType.F32, o.dtype());
        NodesOptions bcast = new NodesOptions();
        new CommandLine(bcast).parseArgs("--ops", "broadcast");
        assertEquals("--ops: broadcast has no two-level form to compare; known: all_reduce, all_gather, reduce_scatter, all_to_all",
                assertThrows(IllegalArgumentException.class, bcast::validate).getMessage());
        NodesOptions type = new NodesOptions();
        new CommandLine(type).parseArgs("--dtype", "fp8");
        assertEquals("--dtype 'fp8': expected bf16, f16 or f32", assertThrows(IllegalArgumentException.class, type::validate).getMessage());
    }

    private static float bf16(float x) {
        int bits = Float.floatToRawIntBits(x);
        bits += 0x7FFF + ((bits >> 16) & 1);  // round to nearest even
        return Float.intBitsToFloat(bits & 0xFFFF0000);
    }
}

package dev.irisjvm.bench.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CclOptionsTest {
    private static final OptionsUnderTest<CclOptions> OPTIONS = new OptionsUnderTest<>(CclOptions::new, CclOptions::validate);

    @Test
    void defaults() {
        CclOptions o = OPTIONS.valid();
        assertEquals(1024, o.minBytes);
        assertEquals(1L << 30, o.maxBytes);
        assertEquals(11, o.sizes().size());   // 1 KiB, 4 KiB, ..., 256 MiB, 1 GiB
        assertEquals(1024L, o.sizes().get(0));
        assertEquals(1L << 30, o.sizes().get(10));
        assertEquals(20, o.repsFor(4096));
        assertEquals(5, o.repsFor(256L << 20));
        assertEquals(DType.BF16, o.dtype);
        assertEquals(ReduceOp.SUM, o.reduceOp);
        assertEquals(List.of(CclOp.values()), o.ops());
        assertEquals(List.of(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.TWO_SHOT, AllReduceAlgorithm.RING,
                AllReduceAlgorithm.ATOMIC, AllReduceAlgorithm.COPY_ENGINE, AllReduceAlgorithm.AUTO), o.algorithms());
        assertEquals(10, o.eagerCalls);
        assertEquals(10, o.graphCalls);
        assertEquals(256L << 10, o.oneCallMaxBytes);
        assertTrue(o.graph());
        assertTrue(o.sweep.gate());
        assertTrue(o.nccl());
        assertEquals(0, o.root);
        assertEquals(Collectives.Options.DEFAULT_STAGING_BYTES, o.stagingBytes);
        assertEquals(Collectives.Options.defaults(), o.collectivesOptions());
        assertNull(o.seed.given());
    }

    @Test
    void listsSizesAndTypesParse() {
        CclOptions o = OPTIONS.valid("--min-bytes", "4k", "--max-bytes", "64m", "--factor", "8", "--ops", "all_gather, all_reduce,all_gather",
                "--algorithms", "auto,one-shot", "--dtype", "f32", "--reduce-op", "AVG", "--graph-calls", "16", "--eager-calls", "1", "--no-graph",
                "--no-nccl", "--no-gate", "--seed", "7", "--root", "1", "--staging-bytes", "64m", "--no-overlap-launches", "--copy-engine-bytes", "8m",
                "--one-call-max-bytes", "0");
        assertEquals(List.of(4096L, 32768L, 262144L, 2097152L, 16777216L, 67108864L), o.sizes());
        assertEquals(List.of(CclOp.ALL_GATHER, CclOp.ALL_REDUCE), o.ops());
        assertEquals(List.of(AllReduceAlgorithm.AUTO, AllReduceAlgorithm.ONE_SHOT), o.algorithms());
        assertEquals(DType.F32, o.dtype);
        assertEquals(ReduceOp.AVG, o.reduceOp);
        assertEquals(16, o.graphCalls);
        assertEquals(1, o.eagerCalls);
        assertEquals(0, o.oneCallMaxBytes);
        assertFalse(o.graph());
        assertFalse(o.nccl());
        assertFalse(o.sweep.gate());
        assertEquals(7L, o.seed.given());
        assertEquals(1, o.root);
        assertEquals(64L << 20, o.collectivesOptions().stagingBytes());
        assertEquals(8L << 20, o.collectivesOptions().copyEngineBytes());
        assertEquals(Collectives.Options.NEVER, OPTIONS.parse("--copy-engine-bytes", "Never").copyEngineBytes);
        assertFalse(o.collectivesOptions().overlapLaunches());
        assertTrue(OPTIONS.parse().collectivesOptions().overlapLaunches(), "overlapped launches by default");
        assertEquals(DType.F16, OPTIONS.parse("--dtype", "fp16").dtype);
        assertEquals(DType.BF16, OPTIONS.parse("--dtype", "BF16").dtype);
    }

    @Test
    void badValuesAreRejected() {
        assertThrows(CommandLine.ParameterException.class, () -> OPTIONS.parse("--dtype", "i32"));
        assertThrows(CommandLine.ParameterException.class, () -> OPTIONS.parse("--reduce-op", "prod"));
        assertThrows(IllegalArgumentException.class, () -> OPTIONS.parse("--ops", "all_reduce,gather").validate());
        assertThrows(IllegalArgumentException.class, () -> OPTIONS.parse("--algorithms", "tree").validate());
        assertThrows(IllegalArgumentException.class, () -> OPTIONS.parse("--algorithms", " , ").validate());
        OPTIONS.rejects("--max-bytes", "--max-bytes", "512", "--min-bytes", "1k");
        OPTIONS.rejects("--graph-calls", "--graph-calls", "0");
        OPTIONS.rejects("--eager-calls", "--eager-calls", "0");
        OPTIONS.rejects("--warmup", "--warmup", "0");
        assertThrows(IllegalArgumentException.class, () -> OPTIONS.parse("--heap", "lots").validate());
        CclOptions root = OPTIONS.valid("--root", "2");
        assertThrows(IllegalArgumentException.class, () -> root.validateFor(2));
        root.validateFor(3);
    }

    @Test
    void autoHeapHoldsThreeBuffersAndTheWorkspace() {
        long workspace = Collectives.workspaceBytes(16L << 20);
        long expected = (3L * (1L << 30) + workspace + (64L << 20) + (1L << 20) - 1) >> 20 << 20;
        assertEquals(expected, OPTIONS.parse().heapBytes());
        assertEquals(2L << 30, OPTIONS.parse("--heap", "2g").heapBytes());
        long small = OPTIONS.parse("--max-bytes", "1m", "--staging-bytes", "0").heapBytes();
        assertTrue(small >= 3 * (1L << 20) + Collectives.HEADER_BYTES + (64L << 20), "heap " + small);
    }

    @Test
    void shapesRoundDownToWholeElementsPerRank() {
        assertEquals(new CclOp.Shape(2048, 2048, 4096), CclOp.ALL_REDUCE.shape(4096, 2, 3));
        assertEquals(new CclOp.Shape(682, 2046, 4092), CclOp.ALL_GATHER.shape(4096, 2, 3));
        assertEquals(new CclOp.Shape(2046, 682, 4092), CclOp.REDUCE_SCATTER.shape(4096, 2, 3));
        assertEquals(new CclOp.Shape(2046, 2046, 4092), CclOp.ALL_TO_ALL.shape(4096, 2, 3));
        assertEquals(new CclOp.Shape(1024, 2048, 4096), CclOp.ALL_GATHER.shape(4096, 2, 2));
        assertEquals(new CclOp.Shape(1024, 1024, 4096), CclOp.BROADCAST.shape(4096, 4, 8));
        assertNull(CclOp.ALL_GATHER.shape(8, 2, 8));
        for (int world = 2; world <= 8; world++) {
            for (CclOp op : CclOp.values()) {
                CclOp.Shape s = op.shape(1024, 2, world);
                assertTrue(s.bytes() <= 1024 && s.bytes() > 1024 - 2 * world, op + " on " + world + ": " + s);
            }
        }
    }

    @Test
    void implNames() {
        assertEquals("iris_one_shot", CclOptions.implName(AllReduceAlgorithm.ONE_SHOT));
        assertEquals("iris_auto", CclOptions.implName(AllReduceAlgorithm.AUTO));
        assertEquals("all_to_all", CclOp.ALL_TO_ALL.id());
        assertTrue(CclOp.REDUCE_SCATTER.reduction());
        assertFalse(CclOp.BROADCAST.reduction());
    }
}

package dev.irisjvm.bench.fused;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import dev.irisjvm.bench.results.FusedMeasurement;
import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.fused.FusedOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Shapes, their per-rank split and NVLink bytes, the options, and the sweep's output check. */
class FusedShapeTest {
    @Test
    void ranksCheckTextsCombine() {
        assertEquals("ok", Verifier.combine(List.of("ok", "ok")));
        // --no-baseline: one shared text, which FusedMeasurement.checkFailed does not count as a failure.
        assertEquals("not checked (--no-baseline)", Verifier.combine(List.of("not checked (--no-baseline)", "not checked (--no-baseline)")));
        assertEquals("rank 1: 3 elements differ", Verifier.combine(List.of("ok", "3 elements differ")));
        assertEquals("rank 0: x; rank 1: y", Verifier.combine(List.of("x", "rank 1: y")));
    }

    @Test
    void split() {
        FusedShape as = FusedShape.parse(FusedOp.ALL_SCATTER, "8192x4608x36864");
        assertEquals(2304, as.localN(2));
        assertEquals(36864, as.localK(2));
        assertEquals(2.0 * 8192 * 2304 * 36864, as.flopsPerRank(2));
        assertEquals(8192.0 * 2304 * 2, as.nvlinkBytes(2, 2));
        FusedShape ar = FusedShape.parse(FusedOp.ALL_REDUCE, "4096x4096x4096");
        assertEquals(4096, ar.localN(2));
        assertEquals(2048, ar.localK(2));
        assertEquals(2 * 0.5 * 4096 * 4096 * 2, ar.nvlinkBytes(2, 2));
        FusedShape rs = FusedShape.parse(FusedOp.REDUCE_SCATTER, "8192x4096x12288");
        assertEquals(0.5 * 8192 * 4096 * 2, rs.nvlinkBytes(2, 2));
        FusedShape ag = FusedShape.parse(FusedOp.ALL_GATHER, "1024x3584x8192");
        assertEquals(1792, ag.localN(2));
        assertEquals(512.0 * 8192 * 2, ag.nvlinkBytes(2, 2));
        assertNull(ag.unsplittable(2));
        assertNull(ag.unsplittable(16), "64 rows per rank: UNFUSED");
        assertTrue(FusedShape.parse(FusedOp.ALL_GATHER, "1000x3584x8192").unsplittable(16).contains("M = 1000 is not a multiple of 16"));
        assertTrue(FusedShape.parse(FusedOp.ALL_REDUCE, "256x256x264").unsplittable(2).contains("per-rank N 256 and K 132"));
        // Reduce-scatter's and all-gather's rows need only be a multiple of the ranks (UNFUSED runs what the kernels cannot).
        assertNull(FusedShape.parse(FusedOp.REDUCE_SCATTER, "8x4096x8192").unsplittable(2));
        assertTrue(FusedShape.parse(FusedOp.REDUCE_SCATTER, "9x4096x8192").unsplittable(2).contains("M = 9 is not a multiple of 2"));
        assertThrows(IllegalArgumentException.class, () -> FusedShape.parse(FusedOp.ALL_REDUCE, "8x8"));
    }

    @Test
    void options() {
        OptionsUnderTest<FusedOptions> options = new OptionsUnderTest<>(FusedOptions::new, FusedOptions::validate);
        List<FusedShape> shapes = options.valid().shapes();
        assertEquals(8, shapes.size());
        assertEquals(FusedOp.ALL_SCATTER, shapes.get(0).op());
        assertEquals("8192x4096x12288", shapes.get(7).id());
        assertEquals(4, options.valid("--quick", "--reps", "25", "--no-trace").shapes().size());
        assertEquals(256, options.valid("--tile-n", "256").tileN);
        options.rejects("--tile-n must be >= 0", "--tile-n", "-1");
        options.rejects("unknown operation 'all_sum'", "--shapes", "all_sum:8x8x8");
        options.rejects("--shapes names no shape", "--shapes", " , ");
        options.rejects("--quick and --small-m are two shape lists", "--quick", "--small-m");
    }

    /** Issue 26's table: six M at two row-parallel shapes for each reduction, two column-parallel ones for all-gather. */
    @Test
    void smallMShapes() {
        OptionsUnderTest<FusedOptions> options = new OptionsUnderTest<>(FusedOptions::new, FusedOptions::validate);
        List<FusedShape> shapes = options.valid("--small-m").shapes();
        assertEquals(3 * 2 * FusedOptions.SMALL_MS.size(), shapes.size());
        assertEquals("all_reduce 1x8192x28672", shapes.get(0).op().id() + " " + shapes.get(0).id());
        assertEquals("reduce_scatter 256x4096x14336", shapes.get(23).op().id() + " " + shapes.get(23).id());
        assertEquals("all_gather 1x28672x8192", shapes.get(24).op().id() + " " + shapes.get(24).id());
        // At two ranks every reduction shape splits N and K; reduce-scatter and all-gather split their
        // rows at every M but 1 (UNFUSED, where the rows are not whole tiles per rank).
        assertEquals(List.of("reduce_scatter 1x8192x28672", "reduce_scatter 1x4096x14336", "all_gather 1x28672x8192",
                "all_gather 1x14336x4096"), shapes.stream().filter(s -> s.unsplittable(2) != null)
                .map(s -> s.op().id() + " " + s.id()).toList());
    }

    /** The exit code counts the checked points that failed: not a baseline left out, not a shape the ranks cannot split. */
    @Test
    void failedChecksCountTheCheckedPointsOnly() {
        List<FusedMeasurement> ms = List.of(
                FusedMeasurement.failed("all_reduce", "8x8x8", 8, 8, 8, 2, FusedMeasurement.BASELINE, "", "not measured (--no-baseline)"),
                FusedMeasurement.failed("all_reduce", "8x8x8", 8, 8, 8, 2, FusedMeasurement.FUSED, "epilogue", "not checked (--no-baseline)"),
                FusedMeasurement.failed("all_gather", "8x8x8", 8, 8, 8, 2, FusedMeasurement.FUSED, "",
                        FusedMeasurement.UNSPLITTABLE + "M = 8 is not a multiple of 128 x 2"),
                FusedMeasurement.failed("reduce_scatter", "8x8x8", 8, 8, 8, 2, FusedMeasurement.FUSED, "epilogue",
                        FusedMeasurement.KERNEL_ROWS + "M = 8 is not a multiple of 128 x 2 (UNFUSED runs it)"),
                FusedMeasurement.failed("all_reduce", "8x8x8", 8, 8, 8, 2, FusedMeasurement.FUSED, "spare_warps", "relative difference 1"),
                FusedMeasurement.failed("all_reduce", "8x8x8", 8, 8, 8, 2, FusedMeasurement.BASELINE_IRIS, "cublas", "relative difference 1"),
                FusedMeasurement.failed("all_reduce", "8x8x8", 8, 8, 8, 2, FusedMeasurement.CUBLASLT, "", "1 of 64 elements are not finite"));
        assertEquals(3, FusedSweep.failedChecks(ms));
    }

    @Test
    void checkOnlyRunsEachPointOnceWithoutTraces() {
        OptionsUnderTest<FusedOptions> options = new OptionsUnderTest<>(FusedOptions::new, FusedOptions::validate);
        FusedOptions o = options.valid("--check-only", "--small-m");
        assertEquals(0, o.warmup());
        assertEquals(1, o.reps());
        assertFalse(o.trace());
        FusedOptions timed = options.valid();
        assertEquals(5, timed.warmup());
        assertEquals(30, timed.reps());
        assertTrue(timed.trace());
        assertTrue(timed.cublasLt());
        assertFalse(options.valid("--no-cublaslt").cublasLt());
        assertFalse(options.valid("--no-baseline").cublasLt());
    }

    private static ByteBuffer bf16(float... v) {
        ByteBuffer b = ByteBuffer.allocateDirect(2 * v.length).order(ByteOrder.nativeOrder());
        for (float x : v) b.putShort(dev.irisjvm.core.HalfFloats.floatToBf16(x));
        return b.flip();
    }

    /** NCCL's windows hold each operation's collective input and output on this rank (bytes of BF16). */
    @Test
    void windowBytesAreTheCollectivesInputAndOutput() {
        assertArrayEquals(new long[] {2L * 512 * 2048, 2L * 2 * 512 * 2048},
                FusedWorkload.windowBytes(new FusedShape(FusedOp.ALL_SCATTER, 512, 4096, 1024), 2), "M x N/2, gathered twice");
        assertArrayEquals(new long[] {2L * 8 * 8192, 2L * 8 * 8192},
                FusedWorkload.windowBytes(new FusedShape(FusedOp.ALL_REDUCE, 8, 8192, 28672), 2), "the M x N partial, summed");
        assertArrayEquals(new long[] {2L * 512 * 4096, 2L * 256 * 4096},
                FusedWorkload.windowBytes(new FusedShape(FusedOp.REDUCE_SCATTER, 512, 4096, 1024), 2), "half the rows out");
        assertArrayEquals(new long[] {2L * 256 * 8192, 2L * 512 * 8192},
                FusedWorkload.windowBytes(new FusedShape(FusedOp.ALL_GATHER, 512, 28672, 8192), 2), "this rank's rows of A, gathered");
    }

    @Test
    void outputCheck() {
        // All-scatter, M = 2, N = 4 on 2 ranks: NCCL's output is [rank][M][N/2].
        FusedShape s = new FusedShape(FusedOp.ALL_SCATTER, 2, 4, 8);
        ByteBuffer fused = bf16(1, 2, 5, 6, 3, 4, 7, 8);
        ByteBuffer nccl = bf16(1, 2, 3, 4, 5, 6, 7, 8);
        assertEquals("ok", FusedOutputCheck.compare(s, 2, fused, nccl, DType.BF16, true));
        assertTrue(FusedOutputCheck.compare(s, 2, bf16(1, 2, 3, 4, 5, 6, 7, 8), nccl, DType.BF16, true).startsWith("relative difference"));
        assertTrue(FusedOutputCheck.compare(s, 2, bf16(1, 2, 5, Float.NaN, 3, 4, 7, 8), nccl, DType.BF16, true)
                .startsWith("1 of 8 elements are not finite"));
        // The library's all-gather lays its output out as NCCL's: compared element for element.
        assertEquals("ok", FusedOutputCheck.compare(s, 2, bf16(1, 2, 3, 4, 5, 6, 7, 8), nccl, DType.BF16, false));
        assertTrue(FusedOutputCheck.compare(s, 2, fused, nccl, DType.BF16, false).startsWith("relative difference"));
        FusedShape ar = new FusedShape(FusedOp.ALL_REDUCE, 2, 2, 16);
        assertEquals("ok", FusedOutputCheck.compare(ar, 2, bf16(1, 2, 3, 4), bf16(1, 2, 3, 4), DType.BF16, true));
        // cuBLASLt's product against cublasGemmEx's: one rounding each.
        assertEquals("ok", FusedOutputCheck.compareProducts(ar, 2, bf16(1, 2, 3, 4), bf16(1, 2, 3, 4), DType.BF16));
        assertTrue(FusedOutputCheck.compareProducts(ar, 2, bf16(1, 2, 3, 5), bf16(1, 2, 3, 4), DType.BF16)
                .startsWith("relative difference to cublasGemmEx"));
        assertTrue(FusedOutputCheck.compareProducts(ar, 2, bf16(1, Float.NaN, 3, 4), bf16(1, 2, 3, 4), DType.BF16)
                .startsWith("1 of 4 elements are not finite"));
        assertEquals(2 * 3 * 0x1p-8 + 2 * 8 * 0x1p-23, FusedOutputCheck.tolerance(ar, 2, DType.BF16), 1e-15);
    }
}

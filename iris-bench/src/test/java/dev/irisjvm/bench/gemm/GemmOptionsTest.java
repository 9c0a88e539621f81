package dev.irisjvm.bench.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.OptionsUnderTest;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.gemm.GemmLayout;
import dev.irisjvm.kernels.gemm.GemmLayouts;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The sweep's command line: shapes, types, rounds, baselines, rotation. */
class GemmOptionsTest {
    private static final OptionsUnderTest<GemmOptions> OPTIONS = new OptionsUnderTest<>(GemmOptions::new, GemmOptions::validate);

    @Test
    void defaultsAreTheIssuesShapes() {
        GemmOptions o = OPTIONS.valid();
        assertEquals(List.of(new GemmShape(8192, 8192, 8192, GemmLayout.NK), new GemmShape(8192, 8192, 8192, GemmLayout.KN),
                new GemmShape(8192, 8192, 4096, GemmLayout.NK), new GemmShape(8192, 4608, 36864, GemmLayout.NK),
                new GemmShape(4096, 4096, 4096, GemmLayout.NK), new GemmShape(4096, 4096, 4096, GemmLayout.KN),
                new GemmShape(1024, 8192, 8192, GemmLayout.NK)), o.shapes());
        assertEquals(DType.BF16, o.inputType());
        assertEquals(DType.BF16, o.outputType());
        assertEquals(30, o.reps());
        assertTrue(o.reps() >= GemmOptions.MIN_REPS);
        assertEquals(6, o.rounds());
        assertTrue(o.cublas() && o.cublasLt());
        assertEquals(32L << 20, o.cublasLtWorkspaceBytes());
    }

    /** --suite models: its shapes and its own warm-up, reps and rounds, which the command line may still override. */
    @Test
    void suites() {
        GemmOptions o = OPTIONS.valid("--suite", "models");
        assertEquals(GemmSuite.MODELS.shapes(), o.shapes());
        assertEquals("models", o.suiteName());
        assertEquals(GemmSuite.MODELS.origins(), o.origins());
        assertEquals(3, o.warmup());
        assertEquals(20, o.reps());
        assertEquals(6, o.rounds());
        GemmOptions more = OPTIONS.parse("--suite", "models", "--reps", "40", "--rounds", "3", "--warmup", "1");
        assertEquals(List.of(1, 40, 3), List.of(more.warmup(), more.reps(), more.rounds()));
        assertEquals("headline", OPTIONS.parse().suiteName());
        assertEquals(OPTIONS.parse().shapes(), OPTIONS.parse("--suite", "headline").shapes());
        GemmOptions given = OPTIONS.parse("--shapes", "64x64x64");
        assertEquals(null, given.suiteName(), "shapes given one by one are no suite");
        assertTrue(given.origins().isEmpty());
        assertEquals(30, given.reps(), "--shapes runs with the headline settings");
        OPTIONS.rejects("--shapes and --suite: give one of them, not both", "--suite", "models", "--shapes", "64x64x64");
        OPTIONS.rejects("--suite 'all' is not headline or models", "--suite", "all");
        OPTIONS.rejects("--reps must be >= 20, got 10", "--suite", "models", "--reps", "10");
    }

    /** The recorded command names the suite and the settings it ran with, so that it replays the same run. */
    @Test
    void settledOptionsAreRecorded() {
        GemmOptions o = new GemmOptions();
        CommandLine cl = new CommandLine(o);
        cl.parseArgs("--suite", "models");
        o.settle();
        List<String> words = dev.irisjvm.bench.RunRecord.options(cl.getCommandSpec());
        String line = String.join(" ", words);
        assertTrue(line.contains("--suite models") && line.contains("--warmup 3") && line.contains("--reps 20")
                && line.contains("--rounds 6"), line);
        assertFalse(line.contains("--shapes"), line);
        GemmOptions again = OPTIONS.valid(words.toArray(String[]::new));
        assertEquals(o.shapes(), again.shapes());
    }

    @Test
    void baselines() {
        assertTrue(OPTIONS.parse("--no-cublaslt").cublas());
        assertFalse(OPTIONS.parse("--no-cublaslt").cublasLt());
        assertFalse(OPTIONS.parse("--no-cublas").cublasLt(), "no cuBLASLt without cuBLAS, the checks' reference");
        assertEquals(64L << 20, OPTIONS.parse("--cublaslt-workspace-mib", "64").cublasLtWorkspaceBytes());
    }

    @Test
    void thePortableMainloopIsTimedOnlyWhenAskedFor() {
        assertFalse(OPTIONS.parse().portable);
        assertTrue(OPTIONS.parse("--portable").portable);
    }

    @Test
    void shapes() {
        GemmShape s = GemmShape.parse(" 8192X4608x36864 : KN ");
        assertEquals(new GemmShape(8192, 4608, 36864, GemmLayout.KN), s);
        assertEquals("8192x4608x36864:kn", s.id());
        assertEquals(2.0 * 8192 * 4608 * 36864, s.flops());
        assertEquals(36864, s.bRows());
        assertEquals(GemmLayout.NK, GemmShape.parse("64x64x64").layout(), "nk unless said otherwise");
        assertEquals(2, GemmShape.parseList("64x64x64,64x64x64:nk,64x64x64:kn").size(), "duplicates dropped");
        assertThrows(IllegalArgumentException.class, () -> GemmShape.parse("64x64"));
        assertThrows(IllegalArgumentException.class, () -> GemmShape.parse("64x64x64:tn"));
        assertThrows(IllegalArgumentException.class, () -> GemmShape.parse("64xAx64"));
        assertThrows(IllegalArgumentException.class, () -> GemmShape.parse("0x64x64"));
        assertThrows(IllegalArgumentException.class, () -> GemmShape.parseList(" , "));
    }

    @Test
    void transposedAShapesNameBothLayoutsAsTheKernelsDo() {
        GemmShape s = GemmShape.parse("4096x2048x16384:KM_KN");
        assertEquals(new GemmShape(4096, 2048, 16384, GemmLayouts.KM_KN), s);
        assertEquals("4096x2048x16384:km_kn", s.id());
        assertEquals(16384, s.aRows(), "A is stored K x M");
        assertEquals(4096, s.aCols());
        assertEquals(16384, s.bRows());
        assertEquals(GemmLayout.KN, s.layout());
        GemmShape t = GemmShape.parse("256x512x128:km_nk");
        assertEquals(GemmLayouts.KM_NK, t.layouts());
        assertEquals(512, t.bRows());
        assertEquals(256, GemmShape.parse("256x512x128:nk").aRows(), "an M x K A without km_");
        assertEquals(3, GemmShape.parseList("64x64x64:nk,64x64x64:km_nk,64x64x64:km_kn").size(), "distinct layouts, distinct shapes");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GemmShape.parse("64x64x64:mk_nk"));
        assertTrue(e.getMessage().contains("is not one of nk|kn|km_nk|km_kn"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new GemmShape(64, 64, 64, (GemmLayouts) null));
    }

    @Test
    void outOfRange() {
        OPTIONS.rejects("--warmup must be >= 1", "--warmup", "0");
        OPTIONS.rejects("--group-m must be >= 1", "--group-m", "0");
        OPTIONS.rejects("--rounds must be >= 1, got 0", "--rounds", "0");
        OPTIONS.rejects("--cublaslt-workspace-mib must be >= 1, got 0", "--cublaslt-workspace-mib", "0");
        OPTIONS.rejects("--l2-factor must be >= 0", "--l2-factor", "-1");
        OPTIONS.rejects("--dtype 'f32' is not bf16 or f16", "--dtype", "f32");
        OPTIONS.rejects("--out-dtype 'f16': the output is the input type (same) or f32", "--out-dtype", "f16");
        OPTIONS.rejects("is not MxNxK", "--shapes", "64x64");
    }

    @Test
    void types() {
        GemmOptions o = OPTIONS.valid("--dtype", "f16", "--out-dtype", "f32");
        assertEquals(DType.F16, o.inputType());
        assertEquals(DType.F32, o.outputType());
        assertEquals(DType.F16, OPTIONS.parse("--dtype", "fp16", "--out-dtype", "f16").outputType());
    }

    /** Enough sets to hold twice the L2 together; one when a set is already larger. */
    @Test
    void rotation() {
        GemmOptions o = OPTIONS.parse();
        long l2 = 60L << 20;
        assertEquals(2, o.sets(new GemmShape(4096, 4096, 4096, GemmLayout.NK), l2), "64 MiB per set, 120 MiB wanted");
        assertEquals(1, o.sets(new GemmShape(8192, 8192, 8192, GemmLayout.NK), l2));
        assertEquals(30, o.sets(new GemmShape(1024, 1024, 1024, GemmLayout.NK), l2), "4 MiB per set");
        assertEquals(1, OPTIONS.parse("--l2-factor", "0").sets(new GemmShape(1024, 1024, 1024, GemmLayout.NK), l2));
        long heap = GemmSweep.heapBytes(o, l2);
        assertTrue(heap > 604L * 1024 * 1024 + 340L * 1024 * 1024, "room for 8192 x 4608 x 36864: " + heap);
        assertEquals(0, heap % (1 << 20));
    }

}

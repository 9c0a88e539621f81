package dev.irisjvm.bench.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.results.GemmShapeOrigin;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The named shape lists: the models suite's size, coverage, caps and origins, and the headline suite. */
class GemmSuiteTest {
    private static final List<GemmShape> MODELS = GemmSuite.MODELS.shapes();
    private static final List<GemmShapeOrigin> ORIGINS = GemmSuite.MODELS.origins();

    /** The M values issue 26 names. */
    private static final Set<Integer> ISSUE_M = Set.of(1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384);

    private static Set<String> nk(String model, String layer, int tp) {
        return ORIGINS.stream().filter(o -> o.model().equals(model) && o.layer().startsWith(layer) && o.tp() == tp)
                .map(o -> GemmShape.parse(o.shape())).map(s -> s.n() + "x" + s.k()).collect(Collectors.toSet());
    }

    /** A Llama layer's attention projections (QKV {@code qkv} wide) and its MLP ({@code ffn} wide) at {@code tp}. */
    private static void assertLlamaLayers(String model, int hidden, int qkv, int ffn, int tp) {
        assertColumnParallel(model, "qkv_proj", qkv, hidden, tp);
        assertRowParallel(model, "o_proj", hidden, hidden, tp);
        assertMlp(model, "", hidden, ffn, tp);
    }

    /** An MLP whose layers are named {@code prefix} and the projection's name, {@code ffn} wide, at {@code tp}. */
    private static void assertMlp(String model, String prefix, int hidden, int ffn, int tp) {
        assertColumnParallel(model, prefix + "gate_proj/up_proj", ffn, hidden, tp);
        assertRowParallel(model, prefix + "down_proj", hidden, ffn, tp);
    }

    /** A column-parallel layer splits its {@code wide} outputs, N, over the TP ranks. */
    private static void assertColumnParallel(String model, String layer, int wide, int hidden, int tp) {
        assertEquals(Set.of(wide / tp + "x" + hidden), nk(model, layer, tp), model + " " + layer + " TP " + tp);
    }

    /** A row-parallel layer splits its {@code wide} inputs, K, over the TP ranks. */
    private static void assertRowParallel(String model, String layer, int hidden, int wide, int tp) {
        assertEquals(Set.of(hidden + "x" + wide / tp), nk(model, layer, tp), model + " " + layer + " TP " + tp);
    }

    @Test
    void atLeastSixtyShapesWithoutDuplicates() {
        assertTrue(MODELS.size() >= 60 && MODELS.size() <= 120, "60 to 120 shapes, got " + MODELS.size());
        assertEquals(MODELS.size(), new HashSet<>(MODELS).size(), "no shape twice");
        assertEquals(117, MODELS.size(), "the count the options' help states");
    }

    @Test
    void everyIssueMAppears() {
        Set<Integer> ms = MODELS.stream().map(GemmShape::m).collect(Collectors.toCollection(TreeSet::new));
        assertTrue(ms.containsAll(ISSUE_M), "missing M values: " + ISSUE_M.stream().filter(m -> !ms.contains(m)).toList());
    }

    /** Column-parallel layers split N by TP, row-parallel ones K; every model's layers at every TP, from the published dimensions. */
    @Test
    void everyModelsLayersAtEveryTp() {
        for (int tp : new int[] {1, 2, 4, 8}) {
            assertLlamaLayers("Llama-3 8B", 4096, 6144, 14336, tp);
            assertLlamaLayers("Llama-3 70B", 8192, 10240, 28672, tp);
            assertLlamaLayers("Llama-3 405B", 16384, 18432, 53248, tp);
            assertMlp("Mixtral 8x7B", "expert ", 4096, 14336, tp);
        }
        assertEquals(14 * 4, ORIGINS.stream().filter(o -> o.tp() > 0).map(o -> o.model() + o.layer() + o.tp()).distinct().count());
    }

    /** Each layer at one decode and one prefill M, one in each B layout. */
    @Test
    void eachLayerAtADecodeAndAPrefillMInBothLayouts() {
        ORIGINS.stream().filter(o -> o.tp() > 0).collect(Collectors.groupingBy(o -> o.group() + " TP " + o.tp())).forEach((layer, os) -> {
            List<GemmShape> shapes = os.stream().map(o -> GemmShape.parse(o.shape())).toList();
            assertEquals(2, shapes.size(), layer);
            assertEquals(1, shapes.stream().filter(s -> s.m() <= 128).count(), layer + ": one decode M");
            assertEquals(1, shapes.stream().filter(s -> s.m() >= 256).count(), layer + ": one prefill M");
            assertEquals(Set.of(GemmLayout.NK, GemmLayout.KN), shapes.stream().map(GemmShape::layout).collect(Collectors.toSet()), layer);
        });
    }

    /** Calls within a few milliseconds, outputs the output check can download, N and K as the GEMM needs them. */
    @Test
    void capsAndTheGemmsContract() {
        for (GemmShape s : MODELS) {
            assertTrue(s.flops() <= GemmSuite.MAX_FLOPS || s.m() == GemmSuite.PREFILL_M[0], s + " is over the FLOP cap");
            assertTrue((long) s.m() * s.n() <= GemmSuite.MAX_OUTPUT_ELEMENTS, s + " has too large an output");
            assertTrue(s.n() % 8 == 0 && s.k() % 8 == 0, s + ": N and K must be multiples of 8");
        }
        assertEquals(16384, GemmSuite.prefillM(16384, 768, 4096), "a small layer keeps its M");
        assertEquals(1024, GemmSuite.prefillM(16384, 53248, 16384), "405B's MLP at TP 1: 2 x 1024 x 53248 x 16384 < 2^41");
        assertEquals(256, GemmSuite.prefillM(256, 1 << 20, 1 << 20), "never below 256");
    }

    @Test
    void tileEdgesInBothLayouts() {
        List<GemmShape> edges = ORIGINS.stream().filter(o -> o.tp() == 0).map(o -> GemmShape.parse(o.shape())).toList();
        assertTrue(edges.contains(GemmShape.parse("4000x5000x3000:nk")) && edges.contains(GemmShape.parse("4000x5000x3000:kn")));
        assertTrue(edges.contains(GemmShape.parse("1536x1536x1536:nk")) && edges.contains(GemmShape.parse("1536x1536x1536:kn")));
        assertTrue(edges.stream().anyMatch(s -> s.m() % 128 != 0 && s.n() % 256 != 0 && s.k() % 64 != 0), "one ragged in every dimension");
        assertEquals(Set.of(GemmSuite.TILE_EDGES_GROUP), ORIGINS.stream().filter(o -> o.tp() == 0).map(GemmShapeOrigin::model)
                .collect(Collectors.toSet()));
    }

    /** Every shape has an origin, the origins name only suite shapes, in the suite's order. */
    @Test
    void originsFollowTheShapes() {
        assertEquals(MODELS.stream().map(GemmShape::id).toList(), ORIGINS.stream().map(GemmShapeOrigin::shape).distinct().toList());
        assertEquals(new GemmShapeOrigin("1x6144x4096:nk", "Llama-3 8B", "qkv_proj (column-parallel)", 1), ORIGINS.get(0));
        assertEquals(new GemmShapeOrigin("256x6144x4096:kn", "Llama-3 8B", "qkv_proj (column-parallel)", 1), ORIGINS.get(1));
    }

    @Test
    void headlineIsTheIssue5Shapes() {
        assertEquals(GemmShape.parseList(GemmOptions.DEFAULT_SHAPES), GemmSuite.HEADLINE.shapes());
        assertTrue(GemmSuite.HEADLINE.origins().isEmpty());
        assertEquals(GemmSuite.MODELS, GemmSuite.of(" Models "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GemmSuite.of("llama"));
        assertTrue(e.getMessage().contains("--suite 'llama' is not headline or models"), e.getMessage());
    }
}

package dev.irisjvm.bench.gemm;

import dev.irisjvm.bench.OpNames;
import dev.irisjvm.bench.results.GemmShapeOrigin;
import dev.irisjvm.kernels.gemm.GemmLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named shape lists of the GEMM sweep ({@code --suite}), each with the warm-up, repetitions and
 * rounds it runs with unless the command line says otherwise.
 *
 * <ul>
 * <li>{@code headline}: the seven large shapes of issue 5 ({@link GemmOptions#DEFAULT_SHAPES}); 5
 *     warm-up calls, 30 timed calls, 6 rounds. gemm.md reports it.</li>
 * <li>{@code models}: the linear layers of Llama-3 8B, 70B and 405B and Mixtral 8x7B's experts at
 *     tensor-parallel degrees 1, 2, 4 and 8 ({@link ModelLayers}), each at a decode M (1 to 128)
 *     and a prefill M (256 to 16384), plus shapes whose M, N or K is not a multiple of the tile;
 *     issue 26. 3 warm-up calls, 20 timed calls, 6 rounds (so the interleaved order still runs all
 *     six orders). gemm-suite.md reports it.</li>
 * </ul>
 *
 * <p>How {@code models} picks M: the layers are walked in {@link ModelLayers#all()}'s order, the
 * i-th taking decode M {@link #DECODE_M}[i mod 6] and prefill M {@link #PREFILL_M}[i mod 7], so that
 * every M appears across models, layers and TP degrees about equally often. The prefill M is halved
 * (not below 256) while a call would exceed {@link #MAX_FLOPS} FLOPs or an output of {@link
 * #MAX_OUTPUT_ELEMENTS} elements: that keeps each call within a few milliseconds and each output
 * within the host buffer of the output check. Each layer gets both B layouts, one per M: the decode
 * shape is nk and the prefill one kn for even i, the other way round for odd i. A shape that two
 * layers share is run once and keeps both origins.
 *
 * <pre>{@code
 * GemmSuite s = GemmSuite.of("models");
 * s.shapes().size();      // 117
 * s.origins().get(0);     // 1x6144x4096:nk from Llama-3 8B qkv_proj (column-parallel) at TP 1
 * }</pre>
 */
public enum GemmSuite {
    HEADLINE("headline", 5, 30, 6),
    MODELS("models", 3, 20, 6);

    /** The decode Ms, one per layer in turn. */
    static final int[] DECODE_M = {1, 8, 16, 32, 64, 128};
    /** The prefill Ms, one per layer in turn (halved under the caps). */
    static final int[] PREFILL_M = {256, 512, 1024, 2048, 4096, 8192, 16384};
    /** Most FLOPs of one suite call: 2^41, about 3 ms at 700 TFLOP/s. */
    static final long MAX_FLOPS = 1L << 41;
    /** Most output elements of one suite call: 2^28, 1 GiB in F32, which the output check downloads into one buffer. */
    static final long MAX_OUTPUT_ELEMENTS = 1L << 28;
    /** Shapes whose M, N or K is not a multiple of the 128 x 256 x 64 tile (N and K stay multiples of 8, as the GEMM needs). */
    static final List<String> TILE_EDGES = List.of("4000x5000x3000:nk", "4000x5000x3000:kn", "1536x1536x1536:nk",
            "1536x1536x1536:kn", "1000x1000x1000:nk", "2049x3000x2000:kn", "127x4104x1032:nk", "1x5000x3000:kn", "33x1000x8200:nk");
    static final String TILE_EDGES_GROUP = "Tile edges";
    static final String TILE_EDGES_LAYER = "M, N or K not a multiple of the tile";

    private final String id;
    /** The calls per point unless the command line says otherwise (GemmOptions reads them). */
    final int warmup;
    final int reps;
    final int rounds;

    GemmSuite(String id, int warmup, int reps, int rounds) {
        this.id = id;
        this.warmup = warmup;
        this.reps = reps;
        this.rounds = rounds;
    }

    /** The suite called {@code name} (any case); IllegalArgumentException naming the known ones. */
    public static GemmSuite of(String name) {
        return OpNames.byId(values(), GemmSuite::id, name, "--suite '" + name + "' is not headline or models");
    }

    /** "headline" or "models": the name on the command line and in the JSON. */
    public String id() {
        return id;
    }

    /** The shapes in the order they run, without duplicates. */
    public List<GemmShape> shapes() {
        return List.copyOf(byShape().keySet());
    }

    /** Where each shape comes from, in the order of {@link #shapes()}; none for the headline shapes. */
    public List<GemmShapeOrigin> origins() {
        List<GemmShapeOrigin> out = new ArrayList<>();
        byShape().values().forEach(out::addAll);
        return out;
    }

    private Map<GemmShape, List<GemmShapeOrigin>> byShape() {
        Map<GemmShape, List<GemmShapeOrigin>> out = new LinkedHashMap<>();
        if (this == HEADLINE) {
            GemmShape.parseList(GemmOptions.DEFAULT_SHAPES).forEach(s -> out.put(s, List.of()));
            return out;
        }
        List<ModelLayers.Layer> layers = ModelLayers.all();
        for (int i = 0; i < layers.size(); i++) {
            ModelLayers.Layer l = layers.get(i);
            GemmLayout decode = i % 2 == 0 ? GemmLayout.NK : GemmLayout.KN;
            GemmLayout prefill = i % 2 == 0 ? GemmLayout.KN : GemmLayout.NK;
            add(out, new GemmShape(DECODE_M[i % DECODE_M.length], l.n(), l.k(), decode), l.model(), l.layer(), l.tp());
            add(out, new GemmShape(prefillM(PREFILL_M[i % PREFILL_M.length], l.n(), l.k()), l.n(), l.k(), prefill), l.model(), l.layer(),
                    l.tp());
        }
        for (String edge : TILE_EDGES) {
            add(out, GemmShape.parse(edge), TILE_EDGES_GROUP, TILE_EDGES_LAYER, 0);
        }
        return out;
    }

    /** {@code m} halved while the call is over the caps, not below the smallest prefill M. */
    static int prefillM(int m, int n, int k) {
        while (m > PREFILL_M[0] && (2L * m * n * k > MAX_FLOPS || (long) m * n > MAX_OUTPUT_ELEMENTS)) {
            m /= 2;
        }
        return m;
    }

    private static void add(Map<GemmShape, List<GemmShapeOrigin>> out, GemmShape s, String model, String layer, int tp) {
        out.computeIfAbsent(s, x -> new ArrayList<>()).add(new GemmShapeOrigin(s.id(), model, layer, tp));
    }
}

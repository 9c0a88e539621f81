package dev.irisjvm.bench.results;

/**
 * Where one shape of a named GEMM suite comes from, as the sweep's JSON stores it beside the
 * measurements: a model's linear layer at a tensor-parallel degree, or a group of shapes chosen for
 * another reason (tile edges). A shape two layers share has one origin per layer.
 *
 * <pre>{@code
 * new GemmShapeOrigin("16x1536x4096:kn", "Llama-3 8B", "qkv_proj (column-parallel)", 4);
 * new GemmShapeOrigin("4000x5000x3000:nk", "Tile edges", "M, N, K not multiples of the tile", 0);
 * }</pre>
 *
 * @param shape the shape's id, {@code MxNxK:nk|kn} (dev.irisjvm.bench.gemm.GemmShape#id)
 * @param model the model, or the group for shapes that come from no model
 * @param layer the layer and how tensor parallelism splits it
 * @param tp    the tensor-parallel degree, 0 where the shape comes from no model
 */
public record GemmShapeOrigin(String shape, String model, String layer, int tp) {
    /** "Llama-3 8B · qkv_proj (column-parallel)": the report's group. */
    public String group() {
        return model + " · " + layer;
    }
}

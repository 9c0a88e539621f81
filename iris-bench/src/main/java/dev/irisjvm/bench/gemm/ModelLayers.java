package dev.irisjvm.bench.gemm;

import java.util.ArrayList;
import java.util.List;

/**
 * The linear layers of the models the {@link GemmSuite#MODELS} suite is drawn from, as (N, K) at
 * tensor-parallel degrees 1, 2, 4 and 8, Megatron-style: a column-parallel layer (qkv_proj,
 * gate_proj and up_proj) splits its output, N, across the ranks; a row-parallel one (o_proj,
 * down_proj) splits its input, K. gate_proj and up_proj have one shape (N = the MLP width) and
 * count as one layer; a fused gate_up would double N.
 *
 * <pre>{@code
 * ModelLayers.all().get(0);   // Llama-3 8B qkv_proj (column-parallel) at TP 1: N 6144, K 4096
 * }</pre>
 */
final class ModelLayers {
    /** The tensor-parallel degrees every layer is split at. */
    static final int[] TP = {1, 2, 4, 8};

    /**
     * A model's dimensions, from its published configuration.
     *
     * @param experts true when only the experts' MLP is benchmarked (the attention is another model's)
     */
    record Model(String name, int hidden, int intermediate, int heads, int kvHeads, int headDim, boolean experts) {
        /** Q, K and V together: (heads + 2 kvHeads) x headDim. */
        int qkv() {
            return (heads + 2 * kvHeads) * headDim;
        }
    }

    /** One layer at one tensor-parallel degree: C (M x n) = A (M x k) B on each rank. */
    record Layer(String model, String layer, int tp, int n, int k) {}

    /**
     * Llama-3 8B, 70B and 405B (grouped-query attention, 8 KV heads of 128); Mixtral 8x7B's experts
     * (hidden 4096, expert MLP 14336; its attention is Llama-3 8B's shape).
     */
    static final List<Model> MODELS = List.of(
            new Model("Llama-3 8B", 4096, 14336, 32, 8, 128, false),
            new Model("Llama-3 70B", 8192, 28672, 64, 8, 128, false),
            new Model("Llama-3 405B", 16384, 53248, 128, 8, 128, false),
            new Model("Mixtral 8x7B", 4096, 14336, 32, 8, 128, true));

    private ModelLayers() {}

    /** Every model's layers, model by model, then by TP degree, then in the layer's order within a block. */
    static List<Layer> all() {
        List<Layer> out = new ArrayList<>();
        for (Model m : MODELS) {
            for (int tp : TP) {
                out.addAll(layers(m, tp));
            }
        }
        return out;
    }

    /** One model's layers at one TP degree, in the order a block runs them. */
    static List<Layer> layers(Model m, int tp) {
        if (m.experts()) {
            return List.of(new Layer(m.name(), "expert gate_proj/up_proj (column-parallel)", tp, m.intermediate() / tp, m.hidden()),
                    new Layer(m.name(), "expert down_proj (row-parallel)", tp, m.hidden(), m.intermediate() / tp));
        }
        return List.of(new Layer(m.name(), "qkv_proj (column-parallel)", tp, m.qkv() / tp, m.hidden()),
                new Layer(m.name(), "o_proj (row-parallel)", tp, m.hidden(), m.heads() * m.headDim() / tp),
                new Layer(m.name(), "gate_proj/up_proj (column-parallel)", tp, m.intermediate() / tp, m.hidden()),
                new Layer(m.name(), "down_proj (row-parallel)", tp, m.hidden(), m.intermediate() / tp));
    }
}

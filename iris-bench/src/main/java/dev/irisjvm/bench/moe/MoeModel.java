package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.OpNames;

/**
 * The MoE layers the sweep measures: DeepSeek-V3's (H = 7168, top-8 of 256 experts) and
 * Mixtral's (H = 4096, top-2 of 8).
 */
public enum MoeModel {
    DEEPSEEK_V3("deepseek_v3", 7168, 256, 8),
    MIXTRAL("mixtral", 4096, 8, 2);

    private final String id;
    private final int hidden;
    private final int experts;
    private final int topK;

    MoeModel(String id, int hidden, int experts, int topK) {
        this.id = id;
        this.hidden = hidden;
        this.experts = experts;
        this.topK = topK;
    }

    /** The name on the command line and in the JSON. */
    public String id() {
        return id;
    }

    public int hidden() {
        return hidden;
    }

    public int experts() {
        return experts;
    }

    public int topK() {
        return topK;
    }

    /** The model named {@code id} (any case); throws IllegalArgumentException listing the known ones. */
    public static MoeModel of(String id) {
        return OpNames.byId(values(), MoeModel::id, id, "--models: unknown model '" + id + "'; known: deepseek_v3, mixtral");
    }
}

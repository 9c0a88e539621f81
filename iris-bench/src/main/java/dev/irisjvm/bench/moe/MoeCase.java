package dev.irisjvm.bench.moe;

/**
 * One case of the sweep: a model's layer with T tokens on every rank.
 *
 * @param lowLatency whether MoeLowLatency is measured too (small T)
 * @param layer      whether the expert layer is measured too (MoeLayer)
 */
public record MoeCase(MoeModel model, int tokens, boolean lowLatency, boolean layer) {
    /** Routes of one rank: T x topK. */
    public long routes() {
        return (long) tokens * model.topK();
    }

    /** Bytes of token rows one rank sends per call (its own rows included): T x topK x H x 2. */
    public long bytesPerRank() {
        return routes() * model.hidden() * 2L;
    }

    @Override
    public String toString() {
        return model.id() + " T=" + tokens;
    }
}

package dev.irisjvm.kernels.gemm;

import dev.irisjvm.kernels.LruMap;
import java.util.Map;

/**
 * The schedule the rule ({@link StreamKPlan#rule}) gave each recent shape, so that a call of a
 * shape seen before costs a map lookup instead of pricing every schedule again (up to one per
 * possible slice count: a hundred and more for a shape of one tile). The least recently used shapes
 * are dropped beyond a limit. Not thread-safe: its owner ({@link Gemm}) synchronizes.
 */
final class PlanCache {
    private record Shape(int m, int n, int kBlocks, GemmTile swapped, boolean pairs) {}

    private final int multiprocessors;
    private final Map<Shape, StreamKPlan> plans;

    /** A cache of at most {@code entries} shapes' plans on {@code multiprocessors} SMs. */
    PlanCache(int entries, int multiprocessors) {
        this.multiprocessors = multiprocessors;
        this.plans = new LruMap<>(entries);
    }

    /** {@link StreamKPlan#rule} of this shape on the cache's SMs: cached, or chosen and cached. */
    StreamKPlan choose(int m, int n, int kBlocks, GemmTile swapped, boolean pairs) {
        return plans.computeIfAbsent(new Shape(m, n, kBlocks, swapped, pairs),
                s -> StreamKPlan.rule(s.m(), s.n(), s.kBlocks(), multiprocessors, s.swapped(), s.pairs()));
    }

    /** Shapes cached now. */
    int size() {
        return plans.size();
    }
}

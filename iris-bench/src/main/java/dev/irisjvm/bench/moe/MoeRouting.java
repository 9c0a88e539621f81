package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.Seeds;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Every rank's routing of one case, generated on the host from the seed, so that each rank knows
 * all of them as a JVM user's NCCL path must (the counts of an all-to-all-v come from the host):
 * each token picks topK distinct experts uniformly at random, with weights uniform in [0, 1) (not
 * normalized, so that a route lost by combine changes its token's sum). Route i of a rank is
 * token i / topK, slot i % topK; expert e lives on rank e / (E / world).
 *
 * <pre>{@code
 * MoeRouting r = MoeRouting.uniform(MoeModel.MIXTRAL, 1024, 2, 27);
 * r.routesTo(0, 1);    // rank 0's routes to rank 1's experts, in route order
 * r.capacity();        // rows per expert so that nothing drops
 * }</pre>
 */
public final class MoeRouting {
    private final MoeModel model;
    private final int tokens;
    private final int world;
    /** [rank][route]: the route's expert. */
    private final int[][] ids;
    /** [rank][route]: the route's weight. */
    private final float[][] weights;

    private MoeRouting(MoeModel model, int tokens, int world, int[][] ids, float[][] weights) {
        this.model = model;
        this.tokens = tokens;
        this.world = world;
        this.ids = ids;
        this.weights = weights;
    }

    /** Uniform routing of {@code tokens} tokens on each of {@code world} ranks; throws if the experts do not split evenly. */
    public static MoeRouting uniform(MoeModel model, int tokens, int world, long seed) {
        if (world < 1 || model.experts() % world != 0) {
            throw new IllegalArgumentException(model.id() + ": " + model.experts() + " experts do not split evenly over " + world
                    + " ranks");
        }
        int k = model.topK();
        int[][] ids = new int[world][tokens * k];
        float[][] weights = new float[world][tokens * k];
        for (int r = 0; r < world; r++) {
            SplittableRandom random = new SplittableRandom(Seeds.point(seed, (long) tokens * 1000 + model.ordinal(), r));
            for (int t = 0; t < tokens; t++) {
                for (int j = 0; j < k; j++) {
                    int e;
                    do {
                        e = random.nextInt(model.experts());
                    } while (taken(ids[r], t * k, j, e));
                    ids[r][t * k + j] = e;
                    weights[r][t * k + j] = (float) random.nextDouble();
                }
            }
        }
        return new MoeRouting(model, tokens, world, ids, weights);
    }

    private static boolean taken(int[] ids, int from, int count, int e) {
        for (int i = from; i < from + count; i++) {
            if (ids[i] == e) {
                return true;
            }
        }
        return false;
    }

    public MoeModel model() {
        return model;
    }

    public int tokens() {
        return tokens;
    }

    public int world() {
        return world;
    }

    public int localExperts() {
        return model.experts() / world;
    }

    /** Rank {@code rank}'s expert ids, I32 [tokens, topK] flattened (a copy). */
    public int[] ids(int rank) {
        return ids[rank].clone();
    }

    /** Rank {@code rank}'s weights, F32 [tokens, topK] flattened (a copy). */
    public float[] weights(int rank) {
        return weights[rank].clone();
    }

    /** The rank that holds expert {@code e}. */
    public int owner(int e) {
        return e / localExperts();
    }

    /** Rank {@code from}'s routes to rank {@code to}'s experts, in route order. */
    public int[] routesTo(int from, int to) {
        return Arrays.stream(indices(from)).filter(i -> owner(ids[from][i]) == to).toArray();
    }

    private int[] indices(int rank) {
        int[] all = new int[ids[rank].length];
        Arrays.setAll(all, i -> i);
        return all;
    }

    /** Rows rank {@code rank} sends to each rank (itself included). */
    public long[] sendRows(int rank) {
        long[] rows = new long[world];
        for (int e : ids[rank]) {
            rows[owner(e)]++;
        }
        return rows;
    }

    /** Rows rank {@code rank} receives from each rank (itself included). */
    public long[] recvRows(int rank) {
        long[] rows = new long[world];
        for (int s = 0; s < world; s++) {
            for (int e : ids[s]) {
                if (owner(e) == rank) {
                    rows[s]++;
                }
            }
        }
        return rows;
    }

    /** Rows each local expert of rank {@code rank} gets from all ranks. */
    public int[] expertRows(int rank) {
        int l = localExperts();
        int[] rows = new int[l];
        for (int[] rankIds : ids) {
            for (int e : rankIds) {
                if (owner(e) == rank) {
                    rows[e - rank * l]++;
                }
            }
        }
        return rows;
    }

    /** Rows each local expert of rank {@code rank} gets from rank {@code from}: [local expert]. */
    public int[] expertRowsFrom(int rank, int from) {
        int l = localExperts();
        int[] rows = new int[l];
        for (int e : ids[from]) {
            if (owner(e) == rank) {
                rows[e - rank * l]++;
            }
        }
        return rows;
    }

    /** Rows per expert so that nothing drops: the most any expert of any rank gets, at least 1. */
    public int capacity() {
        int most = 1;
        for (int r = 0; r < world; r++) {
            for (int n : expertRows(r)) {
                most = Math.max(most, n);
            }
        }
        return most;
    }

    /** The most rows any rank receives (the size of NCCL's receive buffer, the same on every rank). */
    public long maxRecvRows() {
        long most = 0;
        for (int r = 0; r < world; r++) {
            most = Math.max(most, Arrays.stream(recvRows(r)).sum());
        }
        return most;
    }
}

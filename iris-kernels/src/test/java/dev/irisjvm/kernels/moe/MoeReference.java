package dev.irisjvm.kernels.moe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The host's MoE dispatch and combine, for the GPU scenarios: the layout {@link MoeDispatch}
 * documents, computed route by route from every rank's expert ids, and combine's sums in double.
 * The dispatch's received rows, counts, sources and stats must equal it bit for bit; combine's
 * output must lie within {@link #combineBound} of it. {@link #regions} is the layout of the
 * low-latency mode ({@link MoeLowLatency}).
 */
final class MoeReference {
    private MoeReference() {}

    /** A received row's origin: rank {@code rank}'s route {@code route} (token * topK + k). */
    record Source(int rank, int route) {}

    /**
     * The dispatch of every rank's routes.
     *
     * @param matrix       [src][e]: routes of rank src to expert e (valid ids only)
     * @param routes       [rank][route]: the route's row in its expert, or -1 (full or a bad id)
     * @param rows         [e]: expert e's delivered rows in order (at most the capacity)
     * @param routed       [e]: routes to expert e from all ranks
     * @param droppedHere  [rank]: routes of the rank that found their expert full
     * @param badHere      [rank]: routes of the rank with an id outside [0, experts)
     * @param firstBad     [rank]: the lowest such route, or -1
     * @param droppedAll   routes over all ranks that found their expert full
     * @param fullExperts  experts routed more than the capacity
     * @param firstFull    the lowest such expert, or -1
     */
    record Dispatch(int world, int experts, int topK, int capacity, int[][] matrix, int[][] routes, List<List<Source>> rows,
                    int[] routed, int[] droppedHere, int[] badHere, int[] firstBad, int droppedAll, int fullExperts, int firstFull) {
        int localExperts() {
            return experts / world;
        }

        /** Rows local expert l of rank r got. */
        int count(int r, int l) {
            return rows.get(r * localExperts() + l).size();
        }
    }

    /**
     * @param ids [rank][route]: each rank's expert ids, token-major (route = token * topK + k); a
     *            rank's array has that rank's tokens * topK entries
     */
    static Dispatch dispatch(int[][] ids, int experts, int topK, int capacity) {
        int world = ids.length;
        int[][] matrix = new int[world][experts];
        int[] badHere = new int[world];
        int[] firstBad = new int[world];
        Arrays.fill(firstBad, -1);
        for (int s = 0; s < world; s++) {
            for (int i = 0; i < ids[s].length; i++) {
                int e = ids[s][i];
                if (e >= 0 && e < experts) {
                    matrix[s][e]++;
                } else {
                    badHere[s]++;
                    if (firstBad[s] < 0) firstBad[s] = i;
                }
            }
        }
        List<List<Source>> rows = new ArrayList<>();
        for (int e = 0; e < experts; e++) rows.add(new ArrayList<>());
        int[][] routes = new int[world][];
        int[] droppedHere = new int[world];
        int[] next = new int[experts];  // rows taken so far, over ranks 0..s in order
        for (int s = 0; s < world; s++) {
            routes[s] = new int[ids[s].length];
            for (int i = 0; i < ids[s].length; i++) {
                int e = ids[s][i];
                if (e < 0 || e >= experts) {
                    routes[s][i] = -1;
                    continue;
                }
                int pos = next[e]++;
                if (pos < capacity) {
                    routes[s][i] = pos;
                    rows.get(e).add(new Source(s, i));
                } else {
                    routes[s][i] = -1;
                    droppedHere[s]++;
                }
            }
        }
        int[] routed = new int[experts];
        int droppedAll = 0;
        int fullExperts = 0;
        int firstFull = -1;
        for (int e = 0; e < experts; e++) {
            for (int s = 0; s < world; s++) routed[e] += matrix[s][e];
            if (routed[e] > capacity) {
                droppedAll += routed[e] - capacity;
                fullExperts++;
                if (firstFull < 0) firstFull = e;
            }
        }
        return new Dispatch(world, experts, topK, capacity, matrix, routes, rows, routed, droppedHere, badHere, firstBad, droppedAll,
                fullExperts, firstFull);
    }

    /**
     * The low-latency layout: [e][src] = the routes of rank src to expert e in route order, so that
     * route [e][src][j] lands in row j of region (e % L, src) on rank e / L. Ids outside [0,
     * experts) land nowhere. Its combine is {@link #combine} of {@link #dispatch} with no capacity.
     */
    static List<List<List<Integer>>> regions(int[][] ids, int experts) {
        List<List<List<Integer>>> regions = new ArrayList<>();
        for (int e = 0; e < experts; e++) {
            List<List<Integer>> bySource = new ArrayList<>();
            for (int s = 0; s < ids.length; s++) bySource.add(new ArrayList<>());
            regions.add(bySource);
        }
        for (int s = 0; s < ids.length; s++) {
            for (int i = 0; i < ids[s].length; i++) {
                int e = ids[s][i];
                if (e >= 0 && e < experts) regions.get(e).get(s).add(i);
            }
        }
        return regions;
    }

    /** Combine's result in double, and per element the sum of the terms' magnitudes (for the bound). */
    record Sums(double[] out, double[] abs) {}

    /**
     * Combine on rank {@code r} in double: out[t][h] = sum over delivered routes (t, k) of
     * weights[t k] * y(route)[h], where {@code expertRow} gives the expert output row of a route as
     * the experts computed it (bf16 values).
     */
    static Sums combine(Dispatch d, int r, int tokens, int hidden, float[] weights, RowOf expertRow) {
        double[] out = new double[tokens * hidden];
        double[] abs = new double[tokens * hidden];
        for (int t = 0; t < tokens; t++) {
            for (int k = 0; k < d.topK(); k++) {
                int route = t * d.topK() + k;
                if (d.routes()[r][route] < 0) continue;
                double w = weights[route];
                float[] y = expertRow.row(r, route);
                for (int h = 0; h < hidden; h++) {
                    out[t * hidden + h] += w * y[h];
                    abs[t * hidden + h] += Math.abs(w * y[h]);
                }
            }
        }
        return new Sums(out, abs);
    }

    /** The expert output row of rank r's route. */
    @FunctionalInterface
    interface RowOf {
        float[] row(int rank, int route);
    }

    /**
     * |got - ref| allowed for one element of combine: f32 fused multiply-adds over topK terms (each
     * rounding once, relative 2^-24), then one rounding to bf16 (2^-8), plus bf16's absolute error
     * near zero: u |ref| + (1 + u) e_acc + 2^-133, where e_acc = 1.01 topK 2^-24 sum |w y|.
     */
    static double combineBound(double ref, double sumAbs, int topK) {
        double u = 0x1p-8;
        double acc = 1.01 * topK * 0x1p-24 * sumAbs;
        return u * Math.abs(ref) + (1 + u) * acc + 0x1p-133;
    }
}

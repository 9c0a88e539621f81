package dev.irisjvm.bench.gemm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The order in which the implementations of a sweep take their turns in each round, so that none is
 * always first (on a GPU that has just idled, or just been set up) nor always right after the same
 * other one (and its heat or its leftovers in L2): round r rotates the list left by r, and every
 * other cycle of n rounds (n implementations) runs those rotations reversed. Over 2n rounds every
 * implementation holds every position twice; with two or three implementations it also follows
 * every other one equally often, and for three, six rounds run all six orders.
 *
 * <pre>{@code
 * List<String> impls = List.of("iris", "cublas", "cublaslt");
 * RoundOrder.of(impls, 0);   // [iris, cublas, cublaslt]
 * RoundOrder.of(impls, 1);   // [cublas, cublaslt, iris]
 * RoundOrder.of(impls, 3);   // [cublaslt, cublas, iris]: round 0 reversed
 * }</pre>
 */
public final class RoundOrder {
    private RoundOrder() {}

    /** The items in the order of round {@code round} (from 0). */
    public static <T> List<T> of(List<T> items, int round) {
        if (round < 0) {
            throw new IllegalArgumentException("round must be >= 0, got " + round);
        }
        List<T> order = new ArrayList<>(items);
        int n = order.size();
        if (n < 2) {
            return order;
        }
        Collections.rotate(order, -(round % n));
        if ((round / n) % 2 == 1) {
            Collections.reverse(order);
        }
        return order;
    }
}

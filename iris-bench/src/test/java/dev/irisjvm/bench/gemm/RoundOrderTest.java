package dev.irisjvm.bench.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The implementations' order per round: rotated, reversed every other cycle, balanced over 2n rounds. */
class RoundOrderTest {
    private static final List<String> THREE = List.of("iris", "cublas", "cublaslt");

    @Test
    void rotatesThenRunsTheRotationsReversed() {
        assertEquals(List.of("iris", "cublas", "cublaslt"), RoundOrder.of(THREE, 0));
        assertEquals(List.of("cublas", "cublaslt", "iris"), RoundOrder.of(THREE, 1));
        assertEquals(List.of("cublaslt", "iris", "cublas"), RoundOrder.of(THREE, 2));
        assertEquals(List.of("cublaslt", "cublas", "iris"), RoundOrder.of(THREE, 3));
        assertEquals(List.of("iris", "cublaslt", "cublas"), RoundOrder.of(THREE, 4));
        assertEquals(List.of("cublas", "iris", "cublaslt"), RoundOrder.of(THREE, 5));
        assertEquals(RoundOrder.of(THREE, 0), RoundOrder.of(THREE, 6), "the pattern repeats every 2n rounds");
        assertEquals(List.of("a", "b"), RoundOrder.of(List.of("a", "b"), 0));
        assertEquals(List.of("b", "a"), RoundOrder.of(List.of("a", "b"), 1));
        assertEquals(List.of("iris"), RoundOrder.of(List.of("iris"), 7), "one implementation: nothing to rotate");
        assertEquals(THREE, List.of("iris", "cublas", "cublaslt"), "the list given is not changed");
        assertThrows(IllegalArgumentException.class, () -> RoundOrder.of(THREE, -1));
    }

    /** Six rounds of three: all six orders, every place twice, every implementation right after each other one twice. */
    @Test
    void sixRoundsOfThreeAreBalanced() {
        Set<List<String>> orders = new HashSet<>();
        Map<String, Integer> places = new HashMap<>();
        Map<String, Integer> follows = new HashMap<>();
        for (int round = 0; round < 2 * THREE.size(); round++) {
            List<String> order = RoundOrder.of(THREE, round);
            orders.add(order);
            for (int i = 0; i < order.size(); i++) {
                places.merge(order.get(i) + "@" + i, 1, Integer::sum);
                if (i > 0) {
                    follows.merge(order.get(i - 1) + ">" + order.get(i), 1, Integer::sum);
                }
            }
        }
        assertEquals(6, orders.size(), "every permutation once: " + orders);
        assertEquals(9, places.size());
        places.forEach((k, v) -> assertEquals(2, v, k));
        assertEquals(6, follows.size(), "every ordered pair: " + follows);
        follows.forEach((k, v) -> assertEquals(2, v, k));
    }

    /** Any count over 2n rounds: every implementation in every place equally often. */
    @Test
    void everyPlaceEquallyOftenForAnyCount() {
        for (int n = 2; n <= 5; n++) {
            List<Integer> items = java.util.stream.IntStream.range(0, n).boxed().toList();
            int[][] seen = new int[n][n];
            for (int round = 0; round < 2 * n; round++) {
                List<Integer> order = RoundOrder.of(items, round);
                for (int place = 0; place < n; place++) {
                    seen[order.get(place)][place]++;
                }
            }
            for (int item = 0; item < n; item++) {
                for (int place = 0; place < n; place++) {
                    assertEquals(2, seen[item][place], n + " implementations: item " + item + " at place " + place);
                }
            }
        }
    }
}

package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.moe.MoeReference.Dispatch;
import dev.irisjvm.kernels.moe.MoeReference.Source;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The host reference the GPU scenarios compare with: a worked example, and its laws on random routings. */
class MoeReferenceTest {
    @Test
    void theLowLatencyRegionsHoldEachSourcesRoutesInRouteOrder() {
        int[][] ids = {
                {0, 1, 0, 3, 0, 1},  // rank 0: tokens (0,1) (0,3) (0,1)
                {0, 2, 1, 4}};       // rank 1: tokens (0,2) (1,bad)
        List<List<List<Integer>>> r = MoeReference.regions(ids, 4);
        assertEquals(List.of(List.of(0, 2, 4), List.of(0)), r.get(0));  // nothing dropped: a region holds all of a source's routes
        assertEquals(List.of(List.of(1, 5), List.of(2)), r.get(1));
        assertEquals(List.of(List.of(), List.of(1)), r.get(2));
        assertEquals(List.of(List.of(3), List.of()), r.get(3));  // the bad id (route 3 of rank 1) lands nowhere
    }

    @Test
    void aWorkedExample() {
        // 2 ranks, 4 experts (rank 0: 0 and 1, rank 1: 2 and 3), top-2, capacity 2.
        int[][] ids = {
                {0, 1, 0, 3, 0, 1},  // rank 0: tokens (0,1) (0,3) (0,1)
                {0, 2, 1, 4}};       // rank 1: tokens (0,2) (1,bad)
        Dispatch d = MoeReference.dispatch(ids, 4, 2, 2);
        assertArrayEquals(new int[] {3, 2, 0, 1}, d.matrix()[0]);
        assertArrayEquals(new int[] {1, 1, 1, 0}, d.matrix()[1]);
        // Expert 0: rank 0's routes 0, 2 take rows 0, 1; route 4 and rank 1's route 0 find it full.
        assertEquals(List.of(new Source(0, 0), new Source(0, 2)), d.rows().get(0));
        assertEquals(List.of(new Source(0, 1), new Source(0, 5)), d.rows().get(1));  // rank 1's route 2 is third: dropped
        assertEquals(List.of(new Source(1, 1)), d.rows().get(2));
        assertEquals(List.of(new Source(0, 3)), d.rows().get(3));
        assertArrayEquals(new int[] {0, 0, 1, 0, -1, 1}, d.routes()[0]);
        assertArrayEquals(new int[] {-1, 0, -1, -1}, d.routes()[1]);
        assertArrayEquals(new int[] {4, 3, 1, 1}, d.routed());
        assertArrayEquals(new int[] {1, 2}, d.droppedHere());
        assertArrayEquals(new int[] {0, 1}, d.badHere());
        assertArrayEquals(new int[] {-1, 3}, d.firstBad());
        assertEquals(3, d.droppedAll(), "expert 0 over by 2, expert 1 over by 1");
        assertEquals(2, d.fullExperts());
        assertEquals(0, d.firstFull());
        assertEquals(2, d.count(0, 0));
        assertEquals(1, d.count(1, 1));
    }

    @Test
    void combineSumsTheDeliveredRoutesWithTheirWeights() {
        int[][] ids = {{0, 1, 1, 1}, {0, 0}};
        // Capacity 2. Expert 0: rank 0's route 0, rank 1's route 0 (rank 1's route 1 dropped); expert 1: rank 0's routes 1,
        // 2 (route 3 dropped).
        Dispatch d = MoeReference.dispatch(ids, 2, 2, 2);
        float[] w = {0.5f, 2f, 1f, 3f};
        MoeReference.Sums s = MoeReference.combine(d, 0, 2, 1, w, (r, route) -> new float[] {10 * r + route + 1});
        assertArrayEquals(new double[] {0.5 * 1 + 2 * 2, 1 * 3}, s.out(), "route 3 dropped");
        MoeReference.Sums s1 = MoeReference.combine(d, 1, 1, 1, new float[] {4f, 5f}, (r, route) -> new float[] {-1});
        assertArrayEquals(new double[] {-4}, s1.out(), "the dropped route adds nothing");
        assertArrayEquals(new double[] {4}, s1.abs());
    }

    @Test
    void onRandomRoutingsEveryDeliveredRouteHasExactlyOneRowInOrder() {
        SplittableRandom random = new SplittableRandom(42);
        for (int trial = 0; trial < 200; trial++) {
            int world = 1 + random.nextInt(8);
            int experts = world * (1 + random.nextInt(4));
            int topK = 1 + random.nextInt(Math.min(4, experts));
            int capacity = 1 + random.nextInt(40);
            int[][] ids = new int[world][];
            for (int s = 0; s < world; s++) {
                ids[s] = new int[random.nextInt(30) * topK];
                for (int i = 0; i < ids[s].length; i++) {
                    ids[s][i] = random.nextInt(20) == 0 ? experts + random.nextInt(3) : random.nextInt(experts);
                }
            }
            Dispatch d = MoeReference.dispatch(ids, experts, topK, capacity);
            Set<Source> seen = new HashSet<>();
            int dropped = 0;
            for (int e = 0; e < experts; e++) {
                List<Source> rows = d.rows().get(e);
                assertEquals(Math.min(capacity, d.routed()[e]), rows.size());
                for (int j = 0; j < rows.size(); j++) {
                    Source src = rows.get(j);
                    assertTrue(seen.add(src));
                    assertEquals(e, ids[src.rank()][src.route()]);
                    assertEquals(j, d.routes()[src.rank()][src.route()]);
                    if (j > 0) {
                        Source prev = rows.get(j - 1);
                        assertTrue(prev.rank() < src.rank() || prev.rank() == src.rank() && prev.route() < src.route(),
                                "ordered by source rank, then route");
                    }
                }
                dropped += Math.max(0, d.routed()[e] - capacity);
            }
            int delivered = 0;
            int droppedHere = 0;
            for (int s = 0; s < world; s++) {
                for (int i = 0; i < ids[s].length; i++) {
                    if (d.routes()[s][i] >= 0) delivered++;
                }
                droppedHere += d.droppedHere()[s];
            }
            assertEquals(seen.size(), delivered);
            assertEquals(dropped, d.droppedAll());
            assertEquals(dropped, droppedHere);
        }
    }

    @Test
    void theCombineBoundCoversTheFinalRoundingAndTheF32Sum() {
        assertEquals(0x1p-8 + (1 + 0x1p-8) * 1.01 * 2 * 0x1p-24 + 0x1p-133, MoeReference.combineBound(1, 1, 2), 0);
        assertTrue(MoeReference.combineBound(0, 0, 4) > 0, "subnormal results still get an absolute slack");
    }
}

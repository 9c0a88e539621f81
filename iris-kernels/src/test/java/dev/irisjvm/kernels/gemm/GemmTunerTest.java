package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GemmTunerTest {
    private static final int SMS = 132;
    private static final StreamKPlan WHOLE = new StreamKPlan(GemmTile.SHORT, 16, 0);
    private static final StreamKPlan SHARED = new StreamKPlan(GemmTile.SHORT, SMS, 16);

    private static GemmProblem problem(int m, int n, int k, float beta) {
        return new GemmProblem(new DeviceMatrix(0x1000_0000L, DType.BF16, m, k, k), GemmALayout.MK,
                new DeviceMatrix(0x2000_0000L, DType.BF16, n, k, k), GemmLayout.NK, 0,
                new DeviceMatrix(0x3000_0000L, DType.BF16, m, n, n), 1f, beta);
    }

    @Test
    void theFirstCallTimesEveryCandidateAndLaterCallsKeepTheFastest() {
        GemmTuner tuner = new GemmTuner();
        List<StreamKPlan> timed = new ArrayList<>();
        Map<StreamKPlan, Double> us = Map.of(WHOLE, 40.0, SHARED, 12.0);
        StreamKPlan first = tuner.plan(problem(1, 4096, 4096, 0f), () -> true, WHOLE, () -> List.of(WHOLE, SHARED), c -> {
            timed.add(c);
            return us.get(c);
        });
        assertEquals(SHARED, first);
        assertEquals(List.of(WHOLE, SHARED), timed);
        StreamKPlan again = tuner.plan(problem(1, 4096, 4096, 0f), () -> true, WHOLE, () -> List.of(WHOLE, SHARED), c -> {
            throw new AssertionError("a kept shape is not timed again");
        });
        assertEquals(SHARED, again);
        assertEquals(1, tuner.shapes());
    }

    @Test
    void aRuleOutsideTheCandidatesIsTimedToo() {
        // 9 to 48 rows: the rule runs a swapped tile, which the estimate's candidates do not hold.
        GemmTuner tuner = new GemmTuner();
        List<StreamKPlan> timed = new ArrayList<>();
        StreamKPlan chosen = tuner.plan(problem(1, 4096, 4096, 0f), () -> true, SHARED, () -> List.of(WHOLE), c -> {
            timed.add(c);
            return c == SHARED ? 1 : 2;
        });
        assertEquals(List.of(WHOLE, SHARED), timed);
        assertEquals(SHARED, chosen);
    }

    @Test
    void aCallThatCannotRunTwiceTakesTheRuleAndKeepsNothing() {
        GemmTuner tuner = new GemmTuner();
        StreamKPlan plan = tuner.plan(problem(1, 4096, 4096, 1f), () -> false, WHOLE, () -> List.of(WHOLE, SHARED), c -> {
            throw new AssertionError("beta != 0 or a capturing stream: never timed");
        });
        assertEquals(WHOLE, plan);
        assertEquals(0, tuner.shapes());
    }

    @Test
    void aKeptChoiceServesCallsThatCannotBeTimedAndOnlyTheSameShape() {
        GemmTuner tuner = new GemmTuner();
        tuner.plan(problem(1, 4096, 4096, 0f), () -> true, WHOLE, () -> List.of(WHOLE, SHARED), c -> c == SHARED ? 1 : 2);
        assertEquals(SHARED, tuner.plan(problem(1, 4096, 4096, 1f), () -> false, WHOLE, () -> List.of(WHOLE, SHARED), c -> 0));
        assertEquals(WHOLE, tuner.plan(problem(2, 4096, 4096, 1f), () -> false, WHOLE, () -> List.of(WHOLE, SHARED), c -> 0),
                "another M is another shape");
    }

    @Test
    void candidatesAreTheEstimatesBestFewAndWholeTilesInPairs() {
        List<StreamKPlan> few = GemmTuner.candidates(128, 4096, 64, SMS, true);   // 16 tiles: whole, splits, stream-K
        assertEquals(GemmTuner.SHORTLIST + 1, few.size(), few::toString);
        assertEquals(StreamKPlan.candidates(128, 4096, 64, SMS, true).subList(0, GemmTuner.SHORTLIST).stream()
                .map(p -> StreamKPlan.paired(p, 128, 4096, SMS)).toList(), few.subList(0, GemmTuner.SHORTLIST));
        assertTrue(few.contains(new StreamKPlan(GemmTile.PAIR, 32, 0)), "16 whole wide tiles in one row: 16 pairs, as the rule runs them");
        assertTrue(GemmTuner.candidates(128, 4096, 64, SMS, false).stream().noneMatch(p -> p.tile().clusterM() == 2),
                "where pairs do not pay (StreamKPlan.pairsPay), none in pairs");
        List<StreamKPlan> big = GemmTuner.candidates(8192, 8192, 128, SMS, true);
        assertEquals(new StreamKPlan(GemmTile.PAIR, SMS, 0), big.get(0));
        assertTrue(GemmTuner.candidates(512, 9216, 256, SMS, true).contains(new StreamKPlan(GemmTile.MID, SMS, 66)),
                "a tail shared in step is among the few");
        assertEquals(List.of(new StreamKPlan(GemmTile.NARROW_PAIR, 100, 0), new StreamKPlan(GemmTile.MID_PAIR, 100, 0),
                new StreamKPlan(GemmTile.PAIR, 50, 0)), GemmTuner.candidates(128 * 50, 256, 1, SMS, true), "K = 64: nothing to share, in any tile");
        assertEquals(GemmTuner.SHORTLIST + 1, GemmTuner.candidates(128, 512, 2, SMS, true).size(),
                "the best three of five whole-tile plans and whole wide tiles in pairs: nothing to share");
        for (StreamKPlan plan : GemmTuner.candidates(4000, 5000, Gemm.kBlocks(3000), SMS, true)) {
            assertTrue(plan.tile() != GemmTile.WIDE || plan.sharedTiles() != 0, () -> "whole wide tiles unpaired: " + plan);
        }
    }

    @Test
    void aKeptChoiceIsFoundByItsShape() {
        GemmTuner tuner = new GemmTuner();
        tuner.plan(problem(1, 4096, 4096, 0f), () -> true, WHOLE, () -> List.of(WHOLE, SHARED), c -> c == SHARED ? 1 : 2);
        assertEquals(SHARED, tuner.kept(1, 4096, 4096));
        assertEquals(null, tuner.kept(2, 4096, 4096));
    }
}

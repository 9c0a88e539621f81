package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.gemm.PlanTimings.Shape;
import dev.irisjvm.kernels.gemm.PlanTimings.Timed;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rule's choice between the skinny kernels and a swapped tile for 9 to 32 rows ({@link
 * Gemm#skinnyOverSwapped}) against what GemmPlanTimes timed of both on an H200 at {@code cf0492f}
 * (committed JSON): on every such shape, the way the rule takes is within 3 % of the faster of the
 * skinny kernels' best split and the swapped tile's plan as the rule chooses it. Without a GPU.
 */
class SkinnyOrSwappedTest {
    private static final int SMS = 132;
    private static final String RUN = "2026-12-05-cf0492f";

    @Test
    void theRuleTakesTheFasterOfTheSkinnyKernelsAndTheSwappedTile() throws IOException {
        Map<Shape, List<Timed>> timed = PlanTimings.latest(List.of(PlanTimings.committed(RUN)), name -> name);
        int judged = 0;
        int skinny = 0;
        StringBuilder misses = new StringBuilder();
        for (Map.Entry<Shape, List<Timed>> e : timed.entrySet()) {
            Shape s = e.getKey();
            if (s.m() <= Gemm.SKINNY_ROWS || s.m() > SkinnyGemm.MAX_M) {
                continue;
            }
            StreamKPlan swapped = Gemm.plan(s.m(), s.n(), s.k(), SMS, true);
            Double swappedUs = PlanTimings.usOf(e.getValue(), swapped);
            Double skinnyUs = PlanTimings.best(e.getValue(), "SKINNY");
            assertTrue(swappedUs != null && skinnyUs != null, () -> s + ": the run timed " + swapped + " and the skinny kernels");
            boolean takesSkinny = Gemm.skinnyOverSwapped(swapped, s.m(), s.n());
            double chosen = takesSkinny ? skinnyUs : swappedUs;
            judged++;
            skinny += takesSkinny ? 1 : 0;
            if (chosen > 1.03 * Math.min(skinnyUs, swappedUs)) {
                misses.append(String.format(Locale.ROOT, " %s (skinny %.2f µs, %s %.2f)", s, skinnyUs, swapped.describe(swapped.units(s.m(), s.n())), swappedUs));
            }
        }
        assertEquals(10, judged, "shapes of 9 to 32 rows the run timed");
        assertTrue(skinny > 0 && skinny < judged, "the rule takes either way on some shapes: " + skinny + " of " + judged + " skinny");
        assertTrue(misses.isEmpty(), "the way the rule takes is more than 3 % slower on:" + misses);
    }

    @Test
    void onlyASwappedPlanOfWholeTilesInOneWaveKeepsTheRowsOffTheSkinnyKernels() {
        assertFalse(Gemm.skinnyOverSwapped(Gemm.plan(32, 4096, 1024, SMS, true), 32, 4096), "64 whole tiles");
        assertTrue(Gemm.skinnyOverSwapped(Gemm.plan(32, 16384, 2048, SMS, true), 32, 16384), "256 tiles: two waves");
        assertTrue(Gemm.skinnyOverSwapped(Gemm.plan(16, 1536, 4096, SMS, true), 16, 1536), "24 tiles, split-K");
        assertTrue(Gemm.skinnyOverSwapped(StreamKPlan.whole(GemmTile.SHORT, 32, 4096, SMS), 32, 4096), "not a swapped tile");
    }
}

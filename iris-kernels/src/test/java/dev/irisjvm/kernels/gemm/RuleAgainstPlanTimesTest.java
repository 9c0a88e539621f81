package dev.irisjvm.kernels.gemm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.kernels.gemm.PlanTimings.Shape;
import dev.irisjvm.kernels.gemm.PlanTimings.Timed;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The rule's plan ({@link StreamKPlan#rule}) against every plan GemmPlanTimes timed of the same shape
 * on an H200, from the committed JSON (docs/benchmarks), each shape judged on the latest run that
 * timed it: since {@code b5d43b2}'s runs, 33 of them on the kernels with whole units. On the shapes
 * whose chosen plan was timed (but those the rule runs on the skinny kernels, {@link
 * SkinnyOrSwappedTest}), the rule's plan is the fastest timed or within 3 % of it on all but five
 * of 55, 0.993 of it as a geometric mean. The five: 1024 x 10240 x 8192 (8.6 % off), whole 128 x
 * 128 tiles since {@link ScheduleCost#WAVE_US} went from 6.02 to 6.8 µs, last timed here before
 * whole units ({@code 15fcaf4}; on an H100 at {@code 3f6baa0} as fast as stream-K); 64 x 3072 x
 * 4096 (3.9 %), whole 64 x 64 tiles on 48 blocks (split in two slices of K at 6.02, 6.9 % off);
 * 33 x 1000 x 8200 (4.9 %), faster on 64 x 64 tiles in blocks of 1 x 4, which the rule does not
 * take; 128 x 4096 x 3584 (3.1 %); and 8192 x 8192 x 8192 (4.2 %, timed in pairs only before whole
 * units). At 6.02 1024 x 2304 x 16384 was the fifth (4.4 %, shared by K on 128 x 128 tiles), now
 * whole 128 x 192 tiles. A change of the rule or of its constants that chooses worse on these
 * timings fails here, without a GPU.
 */
class RuleAgainstPlanTimesTest {
    private static final int SMS = 132;
    /** The runs, oldest first, and the tiles each named otherwise ({@code fb12c06}'s SHORT_DUAL is today's 64 x 64 tile). */
    private static final Map<String, Map<String, String>> RUNS = new LinkedHashMap<>();

    static {
        RUNS.put("2026-12-04-fb12c06", Map.of("SHORT_DUAL", "SHORT_THIN", "SHORT_THIN", ""));
        RUNS.put("2026-12-04-404d74a", Map.of());
        RUNS.put("2026-12-04-848012e", Map.of());
        RUNS.put("2026-12-04-848012e-tails", Map.of());
        RUNS.put("2026-12-04-15fcaf4", Map.of());
        RUNS.put("2026-12-05-d4df5a0", Map.of());
        RUNS.put("2026-12-05-cf0492f", Map.of());
        RUNS.put("2026-12-05-b5d43b2", Map.of());
        RUNS.put("2026-12-05-b5d43b2-beside-67daf21", Map.of());
    }

    @Test
    void theRulesPlanIsTheFastestTimedOrNearlySo() throws IOException {
        Judged h200 = judge(latest(RUNS));
        assertTrue(h200.judged >= 51, "shapes whose rule plan was timed: " + h200.judged);
        assertTrue(h200.judged - h200.within <= 5, "the rule's plan more than 3 % slower than the fastest timed on:" + h200.misses);
        assertTrue(h200.mean >= 0.993, "geometric mean of fastest / rule: " + h200.mean);
    }

    /**
     * The same on an H100's timings ({@code 0adf001}, {@code 3f6baa0}: the suite's shapes under 0.9 x
     * cuBLAS and those a higher {@link ScheduleCost#WAVE_US} moves): within 3 % of the fastest on 21
     * of 23, 0.991 of it as a geometric mean; with WAVE_US at 6.02, 19 and 0.978 (64 x 3072 x 4096 and
     * 1024 x 2304 x 16384 split by K, 0.80 and 0.92 of their fastest). The two left: 33 x 1000 x 8200
     * (0.90), as on the H200, and 256 x 1280 x 8192 (0.96).
     */
    @Test
    void onAnH100TheRulesPlanIsNoFurtherFromTheFastest() throws IOException {
        Map<String, Map<String, String>> h100 = new LinkedHashMap<>();
        h100.put("2026-12-06-0adf001-h100-a", Map.of());
        h100.put("2026-12-06-0adf001-h100-b", Map.of());
        h100.put("2026-12-06-3f6baa0-h100-c", Map.of());
        Judged judged = judge(latest(h100));
        assertTrue(judged.judged >= 23, "shapes whose rule plan was timed: " + judged.judged);
        assertTrue(judged.judged - judged.within <= 2, "the rule's plan more than 3 % slower than the fastest timed on:" + judged.misses);
        assertTrue(judged.mean >= 0.99, "geometric mean of fastest / rule: " + judged.mean);
    }

    private record Judged(int judged, int within, double mean, String misses) {}

    /** The rule's plan against the fastest timed plan of every shape the rule runs tiled. */
    private static Judged judge(Map<Shape, List<Timed>> latest) {
        int judged = 0;
        int within = 0;
        double logSum = 0;
        StringBuilder misses = new StringBuilder();
        for (Map.Entry<Shape, List<Timed>> e : latest.entrySet()) {
            Shape s = e.getKey();
            StreamKPlan rule = Gemm.plan(s.m(), s.n(), s.k(), SMS, true);
            if (s.m() <= SkinnyGemm.MAX_M && Gemm.skinnyOverSwapped(rule, s.m(), s.n())) {
                continue;  // the rule runs the skinny kernels (SkinnyOrSwappedTest)
            }
            double fastest = PlanTimings.fastest(e.getValue());
            Double ruleUs = PlanTimings.usOf(e.getValue(), rule);
            if (ruleUs == null) {
                continue;  // the rule has changed since (64 x 53248 x 16384: its tail's CTAs per tile)
            }
            judged++;
            double ratio = fastest / ruleUs;
            logSum += Math.log(ratio);
            if (ratio >= 1 / 1.03) {
                within++;
            } else {
                misses.append(String.format(Locale.ROOT, " %dx%dx%d (%.3f)", s.m(), s.n(), s.k(), ratio));
            }
        }
        return new Judged(judged, within, Math.exp(logSum / judged), misses.toString());
    }

    @Test
    void theFitterFindsTheNarrowTilesCostFromTheSameTimings() throws IOException {
        // ScheduleCost.NARROW_K_BLOCK_US (0.33) was chosen by hand on other runs; the fitter, judging
        // every timed shape, puts the best geometric mean there too (0.9906 at 0.33 and 0.34).
        Map<Shape, List<Timed>> latest = latest(RUNS);
        double best = ScheduleCostFit.bestCost(latest, Set.of(GemmTile.NARROW), 0.28, 0.40, 0.01, new PrintStream(OutputStream.nullOutputStream()));
        assertEquals(ScheduleCost.NARROW_K_BLOCK_US, best, 0.015);
    }

    /** Every shape of {@code runs} as the latest of them timed it. */
    private static Map<Shape, List<Timed>> latest(Map<String, Map<String, String>> runs) throws IOException {
        Map<Shape, List<Timed>> latest = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, String>> run : runs.entrySet()) {
            latest.putAll(PlanTimings.latest(List.of(PlanTimings.committed(run.getKey())), name -> run.getValue().getOrDefault(name, name)));
        }
        return latest;
    }
}

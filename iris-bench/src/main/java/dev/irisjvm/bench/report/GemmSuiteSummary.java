package dev.irisjvm.bench.report;

import dev.irisjvm.bench.report.GemmDocument.Row;
import java.util.Comparator;
import java.util.List;

/**
 * A suite run judged as a whole: how many shapes reach the per-shape ratio, the geometric mean of
 * the ratios against its own bound, and the shapes from worst to best. A shape is judged when it
 * has a ratio (a usable baseline and an Iris time) and Iris's output passed its check; a shape
 * whose output failed counts as failing, and is not in the mean.
 *
 * <pre>{@code
 * GemmSuiteSummary s = new GemmSuiteSummary(rows, 0.90, 0.97);
 * s.geomean();        // exp(mean(ln ratio)) over the judged shapes
 * s.worstFirst();     // failed checks, then ratios from the lowest; unjudged last
 * }</pre>
 */
record GemmSuiteSummary(List<Row> rows, double minRatio, double minGeomean) {

    /** The shapes with a ratio and an output that passed (or could not be) checked. */
    List<Row> judged() {
        return rows.stream().filter(r -> !Double.isNaN(r.ratio()) && !r.checkFailed()).toList();
    }

    long passing() {
        return judged().stream().filter(r -> r.ratio() >= minRatio).count();
    }

    long checkFailures() {
        return rows.stream().filter(Row::checkFailed).count();
    }

    /** Shapes without a ratio and without a failed check: no usable baseline, or no Iris time. */
    long notJudged() {
        return rows.size() - judged().size() - checkFailures();
    }

    /** The geometric mean of the judged ratios, NaN without one. */
    double geomean() {
        List<Row> j = judged();
        return j.isEmpty() ? Double.NaN : Math.exp(j.stream().mapToDouble(r -> Math.log(r.ratio())).sum() / j.size());
    }

    boolean geomeanPasses() {
        return !Double.isNaN(geomean()) && geomean() >= minGeomean;
    }

    /** Every shape judged and reaching the ratio, and the mean reaching its bound. */
    boolean passes() {
        return !rows.isEmpty() && passing() == rows.size() && geomeanPasses();
    }

    /** Failed output checks first, then the judged shapes from the lowest ratio up, then the shapes not judged. */
    List<Row> worstFirst() {
        return rows.stream().sorted(Comparator.comparingInt((Row r) -> r.checkFailed() ? 0 : Double.isNaN(r.ratio()) ? 2 : 1)
                .thenComparingDouble(r -> Double.isNaN(r.ratio()) ? 0 : r.ratio())).toList();
    }
}

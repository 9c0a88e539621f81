package dev.irisjvm.bench.report;

/**
 * The count a target table's summary sentence states: how many of its rows were judged, and how
 * many of those reached their target. A row that could not be judged counts in neither, so a
 * missing figure never reads as a miss.
 *
 * <pre>{@code
 * Tally tally = new Tally();
 * tally.count(Verdict.PASS);
 * tally.count(Verdict.NOT_MEASURED);
 * tally.summary("point(s) reach their target", 2, "not measured", "No point could be judged.");
 * // "1 of 1 point(s) reach their target (1 not measured)."
 * }</pre>
 */
final class Tally {
    private int judged;
    private int passed;

    /** Counts a judged row; returns {@code reached}. */
    boolean judge(boolean reached) {
        judged++;
        passed += reached ? 1 : 0;
        return reached;
    }

    /** Counts a row by its {@link Verdict}: every verdict but "not measured" is judged, a failed output check's too. */
    String count(String verdict) {
        if (!verdict.equals(Verdict.NOT_MEASURED)) {
            judge(verdict.equals(Verdict.PASS));
        }
        return verdict;
    }

    int judged() {
        return judged;
    }

    /** "3 of 4 {@code reached}.", or {@code none} where no row was judged. */
    String summary(String reached, String none) {
        return judged == 0 ? none : passed + " of " + judged + " " + reached + ".";
    }

    /** {@link #summary(String, String)} that also counts the {@code rows} not judged, e.g. "(2 not measured)". */
    String summary(String reached, int rows, String unjudged, String none) {
        return judged == 0 ? none : summary(reached + (judged < rows ? " (" + (rows - judged) + " " + unjudged + ")" : ""), none);
    }
}

package dev.irisjvm.bench.report;

/**
 * One row of the report's "Targets" table: a goal, what was measured against it and the verdict.
 *
 * <pre>{@code
 * TargetResult r = TargetResult.notMeasured("d", "barrier() across ranks", "<= 10 µs", "no BarrierBenchmark results");
 * r.status();   // NOT_MEASURED
 * }</pre>
 *
 * @param id        short name, e.g. "a (load)"
 * @param target    what is being judged
 * @param bound     the goal, e.g. "≥ 0.95 × copy engine"
 * @param measured  the figure(s) it was judged by, as text
 * @param ratio     measured ÷ bound quantity (see {@link Targets}); NaN when not measured
 * @param status    pass, fail or not measured
 * @param source    where the figure comes from (op, size, benchmark, rank)
 */
public record TargetResult(String id, String target, String bound, String measured, double ratio, Status status,
                           String source) {

    /** The verdict. "not measured" is never turned into a pass or a fail. */
    public enum Status {
        PASS("pass"),
        FAIL("**FAIL**"),
        NOT_MEASURED("not measured");

        private final String text;

        Status(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    public static TargetResult notMeasured(String id, String target, String bound, String why) {
        return new TargetResult(id, target, bound, "not measured", Double.NaN, Status.NOT_MEASURED, why);
    }
}

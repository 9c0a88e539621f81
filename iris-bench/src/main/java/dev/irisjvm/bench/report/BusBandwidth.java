package dev.irisjvm.bench.report;

/**
 * Bus bandwidth as nccl-tests defines it: the algorithm bandwidth (bytes ÷ time, bytes being the
 * per-rank buffer nccl-tests sizes the collective by) times a factor of the operation and the
 * world size n, so that the figure compares with the hardware's link bandwidth whatever n is.
 *
 * <table>
 * <caption>Factors (nccl-tests, doc/PERFORMANCE.md)</caption>
 * <tr><th>op</th><th>bytes</th><th>factor</th></tr>
 * <tr><td>all_reduce</td><td>input = output</td><td>2(n-1)/n</td></tr>
 * <tr><td>all_gather</td><td>output (n × input)</td><td>(n-1)/n</td></tr>
 * <tr><td>reduce_scatter</td><td>input (n × output)</td><td>(n-1)/n</td></tr>
 * <tr><td>all_to_all</td><td>input = output</td><td>(n-1)/n</td></tr>
 * <tr><td>broadcast</td><td>the buffer</td><td>1</td></tr>
 * </table>
 *
 * <pre>{@code
 * BusBandwidth.factor("all_reduce", 2);          // 1.0
 * BusBandwidth.factor("all_gather", 8);          // 0.875
 * BusBandwidth.busGbps("all_reduce", 4, 300.0);  // 450.0
 * }</pre>
 */
public final class BusBandwidth {
    private BusBandwidth() {}

    /** The factor of {@code op} on {@code world} ranks; NaN for an op nccl-tests has no factor for. */
    public static double factor(String op, int world) {
        if (world < 1) {
            throw new IllegalArgumentException("world size must be >= 1, got " + world);
        }
        double n = world;
        return switch (op) {
            case "all_reduce" -> 2 * (n - 1) / n;
            case "all_gather", "reduce_scatter", "all_to_all" -> (n - 1) / n;
            case "broadcast" -> 1.0;
            default -> Double.NaN;
        };
    }

    /** Bus bandwidth from the algorithm bandwidth (any unit; the result has the same unit). */
    public static double busGbps(String op, int world, double algorithmGbps) {
        return algorithmGbps * factor(op, world);
    }

    /** The factor as a formula, for the report: "2(n-1)/n = 1". */
    public static String formula(String op, int world) {
        String f = switch (op) {
            case "all_reduce" -> "2(n-1)/n";
            case "all_gather", "reduce_scatter", "all_to_all" -> "(n-1)/n";
            case "broadcast" -> "1";
            default -> "—";
        };
        double v = factor(op, world);
        return Double.isNaN(v) || op.equals("broadcast") ? f : f + " = " + Sizes.number(v);
    }
}

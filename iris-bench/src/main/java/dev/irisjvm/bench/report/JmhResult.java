package dev.irisjvm.bench.report;

import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.Collectors;

/**
 * One benchmark entry of a JMH {@code -rf json} file, from one rank.
 *
 * <p>JMH reports a {@code SingleShotTime} ("ss") score as the time of the whole batch although
 * it labels it "us/op": {@link #microsPerOp} divides by the batch size, so that every figure
 * the report derives is per operation whatever the mode.
 *
 * <pre>{@code
 * JmhResult r = JmhResults.read(Path.of("rma-jmh-rank0.json"), 0).get(0);
 * r.simpleName();                     // "BarrierBenchmark.barrier"
 * r.microsPerOp(r.median());          // e.g. OptionalDouble[6.8]
 * }</pre>
 *
 * @param rank                  the rank whose JVM wrote the file, or -1 if not known
 * @param benchmark             the fully qualified method, e.g. {@code dev.irisjvm.bench.jmh.BarrierBenchmark.barrier}
 * @param mode                  JMH's short mode name: thrpt, avgt, sample, ss
 * @param params                the {@code @Param} values of this entry (empty if none)
 * @param score                 JMH's primary score
 * @param scoreError            its 99.9% error, NaN when JMH could not compute one
 * @param scoreUnit             e.g. "us/op" or "ops/us"
 * @param median                the 50th percentile over the measurement iterations, in scoreUnit
 * @param measurementIterations measurement iterations
 * @param measurementBatchSize  calls per iteration (meaningful for ss)
 */
public record JmhResult(
        int rank,
        String benchmark,
        String mode,
        Map<String, String> params,
        double score,
        double scoreError,
        String scoreUnit,
        double median,
        int measurementIterations,
        int measurementBatchSize) {

    public JmhResult {
        params = Map.copyOf(params);
    }

    /** {@code Class.method}, without the package. */
    public String simpleName() {
        String[] parts = benchmark.split("\\.");
        return parts.length < 2 ? benchmark : parts[parts.length - 2] + "." + parts[parts.length - 1];
    }

    /** The benchmark class's simple name. */
    public String className() {
        String[] parts = benchmark.split("\\.");
        return parts.length < 2 ? "" : parts[parts.length - 2];
    }

    public String method() {
        String[] parts = benchmark.split("\\.");
        return parts[parts.length - 1];
    }

    /** {@code k=v, k=v} in the file's order of keys, sorted for a stable report. */
    public String paramsText() {
        return params.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "));
    }

    /** A figure of this entry (its score, median or error) in microseconds per operation. */
    public OptionalDouble microsPerOp(double value) {
        if (Double.isNaN(value)) {
            return OptionalDouble.empty();
        }
        String unit = scoreUnit == null ? "" : scoreUnit.trim();
        double perOp;
        if (unit.endsWith("/op")) {
            OptionalDouble us = toMicros(unit.substring(0, unit.length() - 3), value);
            if (us.isEmpty()) {
                return us;
            }
            perOp = us.getAsDouble();
            if ("ss".equals(mode) && measurementBatchSize > 1) {
                perOp /= measurementBatchSize;   // ss scores are per batch (see the class comment)
            }
        } else if (unit.startsWith("ops/")) {
            OptionalDouble usPerUnit = toMicros(unit.substring(4), 1.0);
            if (usPerUnit.isEmpty() || value <= 0) {
                return OptionalDouble.empty();
            }
            perOp = usPerUnit.getAsDouble() / value;
        } else {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(perOp);
    }

    /** The error in µs per operation; only for time units (an inverted throughput error is not symmetric). */
    public OptionalDouble errorMicrosPerOp() {
        return scoreUnit != null && scoreUnit.endsWith("/op") ? microsPerOp(scoreError) : OptionalDouble.empty();
    }

    private static OptionalDouble toMicros(String timeUnit, double value) {
        return switch (timeUnit) {
            case "ns" -> OptionalDouble.of(value / 1_000);
            case "us", "µs" -> OptionalDouble.of(value);
            case "ms" -> OptionalDouble.of(value * 1_000);
            case "s" -> OptionalDouble.of(value * 1_000_000);
            case "min" -> OptionalDouble.of(value * 60_000_000);
            default -> OptionalDouble.empty();
        };
    }
}

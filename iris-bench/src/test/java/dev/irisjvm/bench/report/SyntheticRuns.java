package dev.irisjvm.bench.report;

import dev.irisjvm.bench.results.Measurement;
import dev.irisjvm.bench.results.SweepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Synthetic sweeps and JMH files with known answers, for the report tests (no GPU). */
final class SyntheticRuns {
    static final long KIB = 1L << 10;
    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    private final int world;
    private final List<Measurement> ms = new ArrayList<>();

    SyntheticRuns(int world) {
        this.world = world;
    }

    /** Every ordered pair of distinct ranks, at each size, with GB/s from {@code gbpsAt}. */
    SyntheticRuns pairs(String op, String impl, long[] sizes, java.util.function.LongToDoubleFunction gbpsAt) {
        for (long bytes : sizes) {
            for (int i = 0; i < world; i++) {
                for (int p = 0; p < world; p++) {
                    if (i != p) {
                        double gbps = gbpsAt.applyAsDouble(bytes);
                        double us = bytes / (gbps * 1e3);
                        ms.add(new Measurement(op, impl, bytes, i, p, 20, us, us * 0.9, us * 1.2, gbps, 0, "ok"));
                    }
                }
            }
        }
        return this;
    }

    /** Each rank with itself (local copies). */
    SyntheticRuns local(String op, String impl, long[] sizes, double gbps) {
        for (long bytes : sizes) {
            for (int i = 0; i < world; i++) {
                double us = bytes / (gbps * 1e3);
                ms.add(new Measurement(op, impl, bytes, i, i, 20, us, us, us, gbps, 0, "ok"));
            }
        }
        return this;
    }

    /** Latency points: every pair, the same time. */
    SyntheticRuns latency(String op, String impl, long[] sizes, double us) {
        for (long bytes : sizes) {
            for (int i = 0; i < world; i++) {
                for (int p = 0; p < world; p++) {
                    if (i != p) {
                        ms.add(new Measurement(op, impl, bytes, i, p, 100, us, us, us, 0, 0, "ok"));
                    }
                }
            }
        }
        return this;
    }

    SyntheticRuns atomics(String op, long[] sizes, double gops) {
        for (long bytes : sizes) {
            for (int i = 0; i < world; i++) {
                for (int p = 0; p < world; p++) {
                    if (i != p) {
                        double us = (bytes / 8.0) / (gops * 1e3);
                        ms.add(new Measurement(op, "iris", bytes, i, p, 20, us, us, us, 0, gops, "ok"));
                    }
                }
            }
        }
        return this;
    }

    /** A collective: one point per issuer, peer -1. */
    SyntheticRuns collective(String op, String impl, long[] sizes, double gbps) {
        for (long bytes : sizes) {
            for (int i = 0; i < world; i++) {
                double us = bytes / (gbps * 1e3);
                ms.add(new Measurement(op, impl, bytes, i, -1, 20, us, us, us, gbps, 0, "ok"));
            }
        }
        return this;
    }

    SyntheticRuns add(Measurement m) {
        ms.add(m);
        return this;
    }

    SweepResult build() {
        return new SweepResult("2026-11-30T10:00:00Z", world + " x Test GPU, NV18", "CUDA 13.0, NCCL 2.28.3, Java 17",
                "bin/iris-run -n " + world + " -- java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.rma.RmaSweep --out /tmp/x/rma-sweep.json",
                world, List.copyOf(ms));
    }

    /** One JMH 1.37 -rf json entry, in the shape JMH writes (NaN as a string, percentiles as keys). */
    static String jmhEntry(String benchmark, String mode, int batch, String paramsJson, double score, double median,
                           String unit) {
        return String.format(Locale.ROOT, """
                {
                    "jmhVersion" : "1.37",
                    "benchmark" : "%s",
                    "mode" : "%s",
                    "threads" : 1,
                    "forks" : 0,
                    "warmupIterations" : 5,
                    "warmupTime" : "single-shot",
                    "warmupBatchSize" : %d,
                    "measurementIterations" : 20,
                    "measurementTime" : "single-shot",
                    "measurementBatchSize" : %d,
                    %s
                    "primaryMetric" : {
                        "score" : %s,
                        "scoreError" : "NaN",
                        "scoreConfidence" : [ "NaN", "NaN" ],
                        "scorePercentiles" : { "0.0" : %s, "50.0" : %s, "100.0" : %s },
                        "scoreUnit" : "%s",
                        "rawData" : [ [ %s ] ]
                    },
                    "secondaryMetrics" : { }
                }""", benchmark, mode, batch, batch, paramsJson == null ? "" : "\"params\" : " + paramsJson + ",",
                score, median, median, score, unit, score);
    }

    static String jmhFile(String... entries) {
        return "[\n" + String.join(",\n", entries) + "\n]\n";
    }
}

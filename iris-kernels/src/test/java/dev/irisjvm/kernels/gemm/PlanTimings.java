package dev.irisjvm.kernels.gemm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What GemmPlanTimes timed on an H200 (its JSON: one object per plan of a shape, cuBLASLt's and
 * the skinny kernels' too), read back as our plans and their median µs, for the tests and tools that
 * judge the rule on them ({@link RuleAgainstPlanTimesTest}, {@link ScheduleCostFit}).
 */
final class PlanTimings {
    /**
     * One way of a shape and its median µs per call: our plan, or (plan null) another way by the
     * name GemmPlanTimes gave it ("CUBLASLT", "SKINNY").
     */
    record Timed(String way, StreamKPlan plan, double us) {
    }

    record Shape(int m, int n, int k) {
        @Override
        public String toString() {
            return m + "x" + n + "x" + k;
        }
    }

    private PlanTimings() {
    }

    /** The committed JSON of a GemmPlanTimes run, {@code docs/benchmarks/gemm-plans-<run>.json} (run: date and commit). */
    static Path committed(String run) {
        return Path.of(System.getProperty("iris.home", "..")).resolve("docs/benchmarks/gemm-plans-" + run + ".json");
    }

    /**
     * The plans of every shape in {@code runs}, oldest first, each shape as its latest run timed
     * it; {@code rename} gives today's name of a tile a run named otherwise, or "" for one since
     * dropped.
     */
    static Map<Shape, List<Timed>> latest(List<Path> runs, Function<String, String> rename) throws IOException {
        Map<Shape, List<Timed>> latest = new LinkedHashMap<>();
        ObjectMapper json = new ObjectMapper();
        for (Path run : runs) {
            Map<Shape, List<Timed>> here = new LinkedHashMap<>();
            for (JsonNode way : json.readTree(run.toFile())) {
                String name = rename.apply(way.get("tile").asText());
                if (name.isEmpty()) {
                    continue;
                }
                GemmTile tile = tile(name);
                StreamKPlan plan = tile == null ? null : new StreamKPlan(tile, way.get("grid").asInt(), way.get("sharedTiles").asInt());
                Shape shape = new Shape(way.get("m").asInt(), way.get("n").asInt(), way.get("k").asInt());
                here.computeIfAbsent(shape, s -> new ArrayList<>()).add(new Timed(name, plan, way.get("medianUs").asDouble()));
            }
            latest.putAll(here);
        }
        return latest;
    }

    /** The fastest timed µs of a shape's plans (of our GEMM kernels: not cuBLASLt's, not the skinny ones). */
    static double fastest(List<Timed> timed) {
        return timed.stream().filter(t -> t.plan() != null).mapToDouble(Timed::us).min().orElseThrow();
    }

    /** The µs timed for {@code plan}, or null where it was not timed. */
    static Double usOf(List<Timed> timed, StreamKPlan plan) {
        return timed.stream().filter(t -> plan.equals(t.plan())).map(Timed::us).findFirst().orElse(null);
    }

    /** The fastest timed µs of the ways named {@code way} ("CUBLASLT", "SKINNY"), or null where there are none. */
    static Double best(List<Timed> timed, String way) {
        return timed.stream().filter(t -> t.way().equals(way)).map(Timed::us).min(Double::compare).orElse(null);
    }

    private static GemmTile tile(String name) {
        try {
            return GemmTile.valueOf(name);
        } catch (IllegalArgumentException notOurs) {
            return null;  // cuBLASLt or the skinny kernels
        }
    }
}

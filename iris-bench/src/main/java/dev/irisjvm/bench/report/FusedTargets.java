package dev.irisjvm.bench.report;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Issue 9's targets: the speedup of the fused kernel over cuBLAS then NCCL in sequence, measured in
 * the same run, on two H200s (TP = 2), BF16, per operation and global shape.
 *
 * <pre>{@code
 * FusedTargets.speedup("all_reduce", "4096x4096x4096");   // 1.5
 * }</pre>
 */
public final class FusedTargets {
    /** "op shape" to the target speedup. */
    private static final Map<String, Double> TARGETS = new LinkedHashMap<>();

    static {
        TARGETS.put("all_scatter 8192x8192x8192", 1.25);
        TARGETS.put("all_scatter 8192x4608x36864", 1.03);
        TARGETS.put("all_reduce 8192x8192x8192", 1.35);
        TARGETS.put("all_reduce 4096x4096x4096", 1.5);
        TARGETS.put("all_gather 8192x8192x8192", 1.30);
        TARGETS.put("all_gather 1024x3584x8192", 1.3);
        TARGETS.put("reduce_scatter 8192x8192x8192", 1.25);
        TARGETS.put("reduce_scatter 8192x4096x12288", 1.30);
    }

    /** The world size the targets are stated for. */
    public static final int WORLD = 2;

    private FusedTargets() {}

    /** The target speedup, or NaN where the issue names none. */
    public static double speedup(String op, String shape) {
        return TARGETS.getOrDefault(op + " " + shape, Double.NaN);
    }

    /** Every target, "op shape" to speedup, in the order. */
    public static Map<String, Double> all() {
        return Map.copyOf(TARGETS);
    }
}

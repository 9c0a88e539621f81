package dev.irisjvm.bench.fused;

import dev.irisjvm.kernels.fused.FusedOp;
import java.util.Locale;

/**
 * One point of the fused sweep: an operation and the layer's global M x N x K, split over the
 * ranks (tensor parallelism, TP = world size) as the operation splits it:
 *
 * <table>
 * <caption>per-rank problem of each operation</caption>
 * <tr><th>operation</th><th>fused kernel's M x N x K on each rank</th><th>baseline (in sequence)</th></tr>
 * <tr><td>all-scatter</td><td>M x N/w x K</td><td>cuBLAS M x N/w x K, ncclAllGather of the M x N/w result</td></tr>
 * <tr><td>all-reduce</td><td>M x N x K/w</td><td>cuBLAS M x N x K/w, ncclAllReduce of M x N</td></tr>
 * <tr><td>reduce-scatter</td><td>M x N x K/w</td><td>cuBLAS M x N x K/w, ncclReduceScatter to M/w x N</td></tr>
 * <tr><td>all-gather</td><td>M x N/w x K (A gathered)</td><td>ncclAllGather of the M/w x K rows of A, cuBLAS M x N/w x K</td></tr>
 * </table>
 *
 * <pre>{@code
 * FusedShape s = FusedShape.parse(FusedOp.ALL_REDUCE, "8192x8192x8192");
 * s.localN(2); s.localK(2);     // 8192, 4096
 * s.nvlinkBytes(2, 2);          // bytes one rank sends over NVLink in bf16
 * }</pre>
 */
public record FusedShape(FusedOp op, int m, int n, int k) {
    public FusedShape {
        if (op == null) {
            throw new IllegalArgumentException("operation must not be null");
        }
        if (m < 1 || n < 1 || k < 1) {
            throw new IllegalArgumentException("M, N and K must be >= 1, got " + m + " x " + n + " x " + k);
        }
    }

    /** "8192x4608x36864" for {@code op}. */
    public static FusedShape parse(FusedOp op, String text) {
        String[] p = text.trim().toLowerCase(Locale.ROOT).split("x");
        if (p.length != 3) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK");
        }
        try {
            return new FusedShape(op, Integer.parseInt(p[0]), Integer.parseInt(p[1]), Integer.parseInt(p[2]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("shape '" + text + "' is not MxNxK of positive integers");
        }
    }

    /** "8192x8192x8192": the global shape. */
    public String id() {
        return m + "x" + n + "x" + k;
    }

    /** The fused kernel's N on each rank: N / w for the column-parallel operations, else N. */
    public int localN(int world) {
        return op == FusedOp.ALL_SCATTER || op == FusedOp.ALL_GATHER ? n / world : n;
    }

    /** The fused kernel's K on each rank: K / w for the row-parallel operations, else K. */
    public int localK(int world) {
        return op == FusedOp.ALL_REDUCE || op == FusedOp.REDUCE_SCATTER ? k / world : k;
    }

    /** Why this shape cannot be split over {@code world} ranks, or null. */
    public String unsplittable(int world) {
        if (localN(world) != n && localN(world) * (long) world != n) {
            return "N = " + n + " is not divisible by " + world + " ranks";
        }
        if (localK(world) != k && localK(world) * (long) world != k) {
            return "K = " + k + " is not divisible by " + world + " ranks";
        }
        if (op.splitsRows() && m % world != 0) {
            return "M = " + m + " is not a multiple of " + world;
        }
        if (localN(world) % 8 != 0 || localK(world) % 8 != 0) {
            return "the per-rank N " + localN(world) + " and K " + localK(world) + " must be multiples of 8";
        }
        return null;
    }

    /** Floating-point operations of one rank's GEMM: 2 M N_local K_local. */
    public double flopsPerRank(int world) {
        return 2.0 * m * localN(world) * localK(world);
    }

    /**
     * Bytes one rank sends to the others over NVLink in one call, {@code elementBytes} per element:
     * all-scatter its M x N/w block to w - 1 peers; all-reduce (reduce-scatter then all-gather of the
     * sums) 2 (w - 1)/w M N; reduce-scatter (w - 1)/w M N; all-gather its M/w x K rows to w - 1 peers.
     */
    public double nvlinkBytes(int world, int elementBytes) {
        double w = world;
        return switch (op) {
            case ALL_SCATTER -> (w - 1) * m * (double) localN(world) * elementBytes;
            case ALL_REDUCE -> 2 * (w - 1) / w * m * (double) n * elementBytes;
            case REDUCE_SCATTER -> (w - 1) / w * m * (double) n * elementBytes;
            case ALL_GATHER -> (w - 1) * (m / w) * k * elementBytes;
        };
    }

    @Override
    public String toString() {
        return op.id() + " " + id();
    }
}

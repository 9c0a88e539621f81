package dev.irisjvm.bench.fused;

import dev.irisjvm.bench.gemm.OutputCheck;
import dev.irisjvm.bench.gemm.OutputCheck.Difference;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.fused.FusedOp;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.function.LongUnaryOperator;

/**
 * The sweep's one check of a fused output against the baseline's (cuBLAS then NCCL) on the same
 * inputs: no element unwritten or not finite, and the relative Frobenius difference {@code ||c -
 * c_baseline|| / ||c_baseline||} at most the tolerance below. The GPU tests check element by
 * element (FusedScenarios); this guards the timed kernels only.
 *
 * <ul>
 * <li>all-scatter, all-gather + GEMM: each element is one GEMM's result rounded once: {@code 2 u +
 *     K 2^-23} (two F32 summation orders differ by less than K 2^-23 relative even if every
 *     addition truncated).</li>
 * <li>all-reduce, reduce-scatter: w partials, each rounded once, summed and rounded again: {@code
 *     2 (w + 1) u + w K_local 2^-23} (the partials' errors are relative to their own size, which
 *     random data keeps within sqrt(w) of the sum's).</li>
 * </ul>
 *
 * A lost tile, a wrong owner or a stale partial is far beyond either. NCCL's all-gather output is
 * rank-major ([w][M][N/w]); for all-scatter the fused M x N output is compared element by element
 * with the block of the rank that computed it. The second baseline (the GEMM then the library's
 * collective) is laid out as the first and held to the same tolerance.
 */
final class FusedOutputCheck {
    private FusedOutputCheck() {}

    static double tolerance(FusedShape s, int world, DType t) {
        double u = t.unitRoundoff();
        return switch (s.op()) {
            case ALL_SCATTER, ALL_GATHER -> 2 * u + s.localK(world) * 0x1p-23;
            case ALL_REDUCE, REDUCE_SCATTER -> 2 * (world + 1) * u + world * (double) s.localK(world) * 0x1p-23;
        };
    }

    /** "ok", or how one rank's GEMM product differs from another GEMM's on the same inputs (each rounded once). */
    static String compareProducts(FusedShape s, int world, ByteBuffer got, ByteBuffer reference, DType t) {
        return verdict(OutputCheck.difference(got, reference, t, got.capacity() / t.byteSize(), i -> i),
                2 * t.unitRoundoff() + s.localK(world) * 0x1p-23, "cublasGemmEx");
    }

    /** "ok", or what differs; {@code fusedLayout}: whether {@code got} is laid out as the fused kernel's output, else as the reference. */
    static String compare(FusedShape s, int world, ByteBuffer got, ByteBuffer reference, DType t, boolean fusedLayout) {
        int m = s.m();
        int nLocal = s.localN(world);
        // All-scatter: element (row, col) of the fused M x N output is in the reference's block of the rank that computed it.
        LongUnaryOperator at = s.op() != FusedOp.ALL_SCATTER || !fusedLayout ? i -> i
                : i -> ((i % s.n() / nLocal) * m + i / s.n()) * nLocal + i % s.n() % nLocal;
        return verdict(OutputCheck.difference(got, reference, t, got.capacity() / t.byteSize(), at), tolerance(s, world, t),
                "cuBLAS + NCCL");
    }

    /** "ok", the elements that are not finite, or the relative difference to {@code reference} over {@code tol}. */
    private static String verdict(Difference d, double tol, String reference) {
        if (d.notFinite() > 0) {
            return d.notFiniteText();
        }
        return d.relative() <= tol ? "ok"
                : String.format(Locale.ROOT, "relative difference to %s %.3g exceeds %.3g", reference, d.relative(), tol);
    }
}

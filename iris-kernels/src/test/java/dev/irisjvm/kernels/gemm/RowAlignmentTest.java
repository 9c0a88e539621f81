package dev.irisjvm.kernels.gemm;

import static dev.irisjvm.kernels.OperandAddresses.A;
import static dev.irisjvm.kernels.OperandAddresses.B;
import static dev.irisjvm.kernels.OperandAddresses.C;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.DType;
import org.junit.jupiter.api.Test;

class RowAlignmentTest {
    /** M x N x K with contiguous operands in {@code layout}, inputs of {@code in}. */
    private static GemmProblem problem(int m, int n, int k, GemmLayouts layouts, DType in) {
        DeviceMatrix a = layouts.a() == GemmALayout.MK ? DeviceMatrix.contiguous(A, in, m, k) : DeviceMatrix.contiguous(A, in, k, m);
        DeviceMatrix b = DeviceMatrix.contiguous(B, in, layouts.b().bRows(n, k), layouts.b().bCols(n, k));
        return new GemmProblem(a, b, layouts, 0, DeviceMatrix.contiguous(C, in, m, n), 1f, 0f);
    }

    @Test
    void rowsOnWholeLinesNeedNoAdvice() {
        assertNull(RowAlignment.advice(problem(4096, 5120, 3072, GemmLayouts.MK_NK, DType.BF16)));
        assertNull(RowAlignment.advice(problem(4096, 5120, 2944, GemmLayouts.KM_KN, DType.F16)));
        // A's rows alone unaligned (B K x N with N = 5120): measured as fast as aligned rows.
        assertNull(RowAlignment.advice(problem(4096, 5120, 3000, GemmLayouts.MK_KN, DType.BF16)));
    }

    @Test
    void unalignedRowsOfBAreNamedWithTheirStrideAndTheLeadingDimensionThatAvoidsThem() {
        String nk = RowAlignment.advice(problem(4096, 5120, 3000, GemmLayouts.MK_NK, DType.BF16));
        assertTrue(nk.contains("B's rows are 6000 bytes apart and A's 6000, not a multiple of 128"), nk);
        assertTrue(nk.contains("a multiple of 64 elements"), nk);
        String kn = RowAlignment.advice(problem(4096, 5000, 3072, GemmLayouts.MK_KN, DType.F16));
        assertTrue(kn.contains("B's rows are 10000 bytes apart, not a multiple of 128"), kn);
        String km = RowAlignment.advice(problem(4000, 5120, 3000, GemmLayouts.KM_NK, DType.BF16));
        assertTrue(km.contains("B's rows are 6000 bytes apart and A's 8000"), km);
    }

    @Test
    void warnsOncePerInstance() {
        RowAlignment r = new RowAlignment();
        assertFalse(r.check(problem(4096, 5120, 3072, GemmLayouts.MK_NK, DType.BF16)));
        assertTrue(r.check(problem(4096, 5120, 3000, GemmLayouts.MK_NK, DType.BF16)));
        assertFalse(r.check(problem(4096, 5120, 3000, GemmLayouts.MK_NK, DType.BF16)));
        assertFalse(r.check(problem(2048, 3000, 2000, GemmLayouts.MK_NK, DType.BF16)));
        assertTrue(new RowAlignment().check(problem(2048, 3000, 2000, GemmLayouts.MK_NK, DType.BF16)));
    }
}

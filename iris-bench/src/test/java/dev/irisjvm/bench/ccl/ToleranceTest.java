package dev.irisjvm.bench.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.ccl.Tolerance.Rounding;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.ReduceOp;
import org.junit.jupiter.api.Test;

class ToleranceTest {
    @Test
    void exactWhereEveryImplementationRoundsOneValueOnce() {
        for (DType t : new DType[] {DType.BF16, DType.F16, DType.F32}) {
            for (Rounding a : Rounding.values()) {
                for (Rounding b : Rounding.values()) {
                    assertEquals(0.0, Tolerance.bound(ReduceOp.SUM, t, 2, a, b));
                    for (int w = 2; w <= 8; w++) {
                        assertEquals(0.0, Tolerance.bound(ReduceOp.MAX, t, w, a, b));
                        assertEquals(0.0, Tolerance.bound(ReduceOp.MIN, t, w, a, b));
                    }
                }
            }
        }
    }

    @Test
    void sumBoundsAddBothSidesErrors() {
        // 4 ranks, bf16, rounded once vs NCCL: (4 u + 16 uf + tiny) + (16 u + 4 u + 16 uf + 4 tiny)
        double u = 0x1p-8;
        double expected = 24 * u + 32 * 0x1p-24 + 5 * 0x1p-134;
        assertEquals(expected, Tolerance.bound(ReduceOp.SUM, DType.BF16, 4, Rounding.ONCE, Rounding.NCCL), 1e-15);
        double once = Tolerance.bound(ReduceOp.SUM, DType.BF16, 8, Rounding.ONCE, Rounding.NCCL);
        double step = Tolerance.bound(ReduceOp.SUM, DType.BF16, 8, Rounding.EVERY_STEP, Rounding.NCCL);
        assertTrue(once < step, once + " " + step);
        assertTrue(step < 1.0, "a bound must still catch a missing rank's contribution: " + step);
        assertTrue(Tolerance.bound(ReduceOp.SUM, DType.F32, 8, Rounding.EVERY_STEP, Rounding.NCCL) < 1e-4);
        assertTrue(Tolerance.bound(ReduceOp.SUM, DType.F16, 4, Rounding.ONCE, Rounding.ONCE) > 0);
    }

    @Test
    void averagesHaveTighterBoundsThanSums() {
        double avg = Tolerance.bound(ReduceOp.AVG, DType.BF16, 4, Rounding.ONCE, Rounding.NCCL);
        double sum = Tolerance.bound(ReduceOp.SUM, DType.BF16, 4, Rounding.ONCE, Rounding.NCCL);
        assertTrue(avg > 0 && avg < sum, avg + " " + sum);
        assertTrue(Tolerance.bound(ReduceOp.AVG, DType.BF16, 2, Rounding.ONCE, Rounding.NCCL) > 0);
    }

    @Test
    void algorithmsRound() {
        assertEquals(Rounding.ONCE, Tolerance.of(AllReduceAlgorithm.ONE_SHOT));
        assertEquals(Rounding.ONCE, Tolerance.of(AllReduceAlgorithm.TWO_SHOT));
        assertEquals(Rounding.EVERY_STEP, Tolerance.of(AllReduceAlgorithm.RING));
        assertEquals(Rounding.EVERY_STEP, Tolerance.of(AllReduceAlgorithm.ATOMIC));
    }
}

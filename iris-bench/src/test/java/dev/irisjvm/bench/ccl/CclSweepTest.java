package dev.irisjvm.bench.ccl;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.CclFigures;
import dev.irisjvm.bench.results.Measurement;
import org.junit.jupiter.api.Test;

/** The sweep's exit code counts wrong outputs, not baselines the run could not have. */
class CclSweepTest {
    private static Measurement m(String impl, String check) {
        return new Measurement("all_reduce", impl, 0, 0, -1, 0, 0, 0, 0, 0, 0, check);
    }

    @Test
    void unavailableBaselinesAreNotFailedChecks() {
        assertFalse(CclSweep.failedCheck(m("iris_auto", "ok")));
        assertTrue(CclSweep.failedCheck(m("iris_auto", "rank 0's output vs NCCL's: 3 of 4096 elements differ")));
        assertTrue(CclSweep.failedCheck(m("nccl_window", "rank 1's output vs NCCL's: 1 of 4096 elements differ")));
        assertFalse(CclSweep.failedCheck(m("nccl", "nccl unavailable: rank 0: cannot load NCCL")));
        assertFalse(CclSweep.failedCheck(m("nccl_window", CclFigures.WINDOW_UNAVAILABLE
                + "rank 0: NCCL 2.26.2 has no symmetric kernels (they need NCCL 2.27 or later)")));
    }
}

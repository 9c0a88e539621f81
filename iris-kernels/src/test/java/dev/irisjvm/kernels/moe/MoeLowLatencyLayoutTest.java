package dev.irisjvm.kernels.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.runtime.abi.global.KernelAbi;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The low-latency mode's layout: regions, workspace, grids and heap bytes (no GPU). */
class MoeLowLatencyLayoutTest {
    @Test
    void everyRowOfEveryRegionHasItsOwnIndexInRegionMajorOrder() {
        MoeConfig c = MoeConfig.of(64, 12, 3, 5, 1);
        MoeLowLatencyLayout l = MoeLowLatencyLayout.of(c, 4);
        assertEquals(3, l.localExperts());
        assertEquals(15, l.regionRows(), "maxTokens x topK: all of a source's routes");
        assertEquals(3L * 4 * 15, l.receiveRows());
        Set<Long> seen = new HashSet<>();
        for (int e = 0; e < l.localExperts(); e++) {
            for (int src = 0; src < 4; src++) {
                for (int j = 0; j < l.regionRows(); j++) {
                    long row = l.row(e, src, j);
                    assertEquals((e * 4L + src) * 15 + j, row);
                    assertTrue(row >= 0 && row < l.receiveRows());
                    assertTrue(seen.add(row), "row " + row + " taken twice");
                }
            }
        }
    }

    @Test
    void theWorkspaceHoldsTheHeaderThenRoutesAndWeights() {
        MoeLowLatencyLayout l = MoeLowLatencyLayout.of(MoeConfig.of(64, 8, 3, 1001, 1), 2);
        assertEquals(KernelAbi.IRIS_MOE_LL_WS_HEADER_BYTES, l.routes());
        assertTrue(l.routeWeights() >= l.routes() + 3003L * 4);
        assertTrue(l.bytes() >= l.routeWeights() + 3003L * 4);
        for (long offset : new long[] {l.routes(), l.routeWeights(), l.bytes()}) {
            assertEquals(0, offset % 256, "256-byte aligned: " + offset);
        }
        // The header: epoch and tickets where the throughput mode has them, the flags after, the counts last.
        assertEquals(0, KernelAbi.IRIS_MOE_WS_EPOCH);
        assertTrue(KernelAbi.IRIS_MOE_WS_TICKETS + 16 <= KernelAbi.IRIS_MOE_LL_WS_RESULTS);
        assertTrue(KernelAbi.IRIS_MOE_LL_WS_RESULTS + 8 * KernelAbi.IRIS_MAX_RANKS <= KernelAbi.IRIS_MOE_LL_WS_ROWS_SIGNAL);
        assertEquals(KernelAbi.IRIS_MOE_LL_WS_ROWS_COUNT, KernelAbi.IRIS_MOE_LL_WS_ROWS_SIGNAL + 8 * MoeConfig.MAX_EXPERTS);
        assertEquals(KernelAbi.IRIS_MOE_LL_WS_HEADER_BYTES, KernelAbi.IRIS_MOE_LL_WS_ROWS_COUNT + 4 * MoeConfig.MAX_EXPERTS);
    }

    @Test
    void theDispatchHasOneBlockPer512RoutesAndAtLeastOne() {
        assertEquals(1, MoeLowLatencyLayout.dispatchBlocks(0));
        assertEquals(1, MoeLowLatencyLayout.dispatchBlocks(512));
        assertEquals(2, MoeLowLatencyLayout.dispatchBlocks(513));
        assertEquals(2048, MoeLowLatencyLayout.dispatchBlocks(2048L * 512));
    }

    @Test
    void heapBytesCountsEveryBuffer() {
        MoeConfig c = MoeConfig.of(128, 8, 2, 100, 1);
        MoeLowLatencyLayout l = MoeLowLatencyLayout.of(c, 2);
        long rows = 4L * 2 * 200;
        long expected = l.bytes() + rows * 128 * 2 + MoeLayout.alignUp(rows * 4, 256) + 256 + 200L * 128 * 2;
        assertEquals(expected, MoeLowLatency.heapBytes(c, 2));
        // DeepSeek-V3 decode on 8 ranks: 32 local experts x 8 sources x 1024 rows x 7168 x 2 bytes.
        long decode = MoeLowLatency.heapBytes(MoeConfig.of(7168, 256, 8, 128, 1), 8);
        assertTrue(decode > 32L * 8 * 1024 * 7168 * 2 && decode < 32L * 8 * 1024 * 7168 * 2 + (64L << 20), "bytes: " + decode);
    }
}

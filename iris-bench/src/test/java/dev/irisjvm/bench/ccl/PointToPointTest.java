package dev.irisjvm.bench.ccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.bench.report.CclFigures;
import org.junit.jupiter.api.Test;

/** The sends and receives that move an all-gather's and a broadcast's bytes as NCCL's collective would. */
class PointToPointTest {
    @Test
    void allGatherSendsTheInputToEveryRankAndReceivesRankRIntoBlockR() {
        PointToPoint p = PointToPoint.of(CclOp.ALL_GATHER, 5, 3, 1, 0).orElseThrow();
        assertArrayEquals(new long[] {5, 5, 5}, p.sendCounts());      // itself included: its own block of the output
        assertArrayEquals(new long[] {0, 0, 0}, p.sendOffsets());
        assertArrayEquals(new long[] {5, 5, 5}, p.recvCounts());
        assertArrayEquals(new long[] {0, 5, 10}, p.recvOffsets());
    }

    @Test
    void broadcastSendsFromTheRootToEveryOtherRank() {
        PointToPoint root = PointToPoint.of(CclOp.BROADCAST, 7, 4, 2, 2).orElseThrow();
        assertArrayEquals(new long[] {7, 7, 0, 7}, root.sendCounts());
        assertArrayEquals(new long[] {0, 0, 0, 0}, root.recvCounts());
        PointToPoint other = PointToPoint.of(CclOp.BROADCAST, 7, 4, 3, 2).orElseThrow();
        assertArrayEquals(new long[] {0, 0, 0, 0}, other.sendCounts());
        assertArrayEquals(new long[] {0, 0, 7, 0}, other.recvCounts());
        assertArrayEquals(new long[] {0, 0, 0, 0}, other.recvOffsets());   // in place
    }

    @Test
    void theReportKnowsWhichOpsHaveIt() {
        for (CclOp op : CclOp.values()) {
            assertEquals(CclFigures.P2P_OPS.contains(op.id()), PointToPoint.of(op, 8, 2, 0, 0).isPresent(), op.id());
        }
    }

    @Test
    void reductionsAndAllToAllHaveNone() {
        assertTrue(PointToPoint.of(CclOp.ALL_REDUCE, 8, 2, 0, 0).isEmpty());
        assertTrue(PointToPoint.of(CclOp.REDUCE_SCATTER, 8, 2, 0, 0).isEmpty());
        assertTrue(PointToPoint.of(CclOp.ALL_TO_ALL, 8, 2, 0, 0).isEmpty());
    }
}

package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The chunk plan of the pipelined world all-reduce: whole node shards, aligned views, at most eight chunks. */
class PipelinedAllReduceTest {
    @Test
    void anInputNoLargerThanAChunkIsOneChunk() {
        assertEquals(1000, PipelinedAllReduce.chunkElements(1000, 2, 4, 16L << 20));
        assertEquals(8L << 20, PipelinedAllReduce.chunkElements(8L << 20, 2, 4, 16L << 20));
    }

    @Test
    void largeInputsSplitIntoAtMostEightAlignedChunksThatCoverIt() {
        for (int nodeSize : new int[] {2, 3, 4, 8}) {
            // Element counts that the node size divides, as allReduce requires.
            for (long n : new long[] {(128L << 20) * nodeSize, 3L * 1000 * 1000 * nodeSize, 40_963L * nodeSize}) {
                long chunk = PipelinedAllReduce.chunkElements(n, 2, nodeSize, 64 << 10);
                long chunks = (n + chunk - 1) / chunk;
                String what = "n = " + n + " on nodes of " + nodeSize + ": chunk " + chunk;
                assertTrue(chunks >= 2 && chunks <= PipelinedAllReduce.MAX_CHUNKS, what + " makes " + chunks + " chunks");
                assertEquals(0, chunk % (nodeSize * PipelinedAllReduce.ALIGN_ELEMENTS), what + " is not whole aligned shards");
                assertEquals(0, (n - (chunks - 1) * chunk) % nodeSize, what + ": the last chunk is not whole shards");
            }
        }
    }

    @Test
    void chunksApproachTheRequestedSize() {
        long n = 64L << 20;  // 128 MiB of bf16 on nodes of 4, chunks of 16 MiB: exactly eight
        assertEquals(8L << 20, PipelinedAllReduce.chunkElements(n, 2, 4, 16L << 20));
    }
}

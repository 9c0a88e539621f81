package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The work split the kernels use (Partition mirrors split / shard of ccl_common.cuh): pieces and
 * shards tile their range exactly, in order, without overlap, and start on multiples of the grain
 * (so 16-byte vectors stay aligned); grids stay within [1, maxBlocks].
 */
class PartitionTest {
    private static final long[] COUNTS = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 1000, 1023, 4096, 1_000_003, 1L << 20, (1L << 24) + 5};

    @Test
    void splitTilesTheRangeInAlignedPieces() {
        for (long n : COUNTS) {
            for (int blocks : new int[] {1, 2, 3, 7, 64, 132, 256}) {
                for (long grain : new long[] {1, 4, 8, 16}) {
                    for (long begin : new long[] {0, 16 * 1001}) {
                        long next = begin;
                        for (int b = 0; b < blocks; b++) {
                            long[] r = Partition.split(begin, begin + n, b, blocks, grain);
                            String what = "n=" + n + " blocks=" + blocks + " grain=" + grain + " block " + b;
                            assertTrue(r[0] <= r[1], what + ": empty or ordered");
                            if (r[1] > r[0]) {
                                assertEquals(next, r[0], what + ": contiguous");
                                assertEquals(0, (r[0] - begin) % grain, what + ": starts on the grain");
                                next = r[1];
                            }
                        }
                        assertEquals(begin + n, next, "n=" + n + " blocks=" + blocks + " grain=" + grain + ": covered");
                    }
                }
            }
        }
    }

    @Test
    void shardsTileTheTensorAndStartAligned() {
        for (long n : COUNTS) {
            for (int world = 2; world <= 8; world++) {
                for (long lanes : new long[] {4, 8}) {
                    long next = 0;
                    for (int c = 0; c < world; c++) {
                        long[] s = Partition.shard(n, c, world, lanes);
                        String what = "n=" + n + " world=" + world + " lanes=" + lanes + " shard " + c;
                        assertTrue(s[0] <= s[1], what);
                        assertEquals(next, s[0], what + ": contiguous");
                        assertTrue(s[0] % lanes == 0 || s[0] == n, what + ": starts on a vector or at the end");
                        next = s[1];
                    }
                    assertEquals(n, next, "n=" + n + " world=" + world + ": covered");
                }
            }
        }
    }

    @Test
    void blocksGrowWithWorkAndStayInBounds() {
        assertEquals(1, Partition.blocks(0, 16 << 10, 132));
        assertEquals(1, Partition.blocks(1, 16 << 10, 132));
        assertEquals(1, Partition.blocks(16 << 10, 16 << 10, 132));
        assertEquals(2, Partition.blocks((16 << 10) + 1, 16 << 10, 132));
        assertEquals(64, Partition.blocks(1 << 20, 16 << 10, 132));
        assertEquals(132, Partition.blocks(512L << 20, 16 << 10, 132));
        assertEquals(7, Partition.blocks(1L << 40, 1, 7));
    }

    @Test
    void lanesOfA16ByteVector() {
        assertEquals(8, Partition.lanes(2));
        assertEquals(4, Partition.lanes(4));
    }
}

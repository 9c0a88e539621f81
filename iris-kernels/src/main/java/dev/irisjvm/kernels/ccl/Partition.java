package dev.irisjvm.kernels.ccl;

/**
 * The work split of the collective kernels, in Java: the same arithmetic as {@code split} and
 * {@code shard} in ccl_common.cuh (kept for the launch-shape choice, the documentation and the
 * tests), plus the grid size rule.
 */
final class Partition {
    private Partition() {}

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    static long alignUp(long a, long b) {
        return ceilDiv(a, b) * b;
    }

    /** Block b of blocks' piece [lo, hi) of [begin, end), a multiple of grain long except the last. */
    static long[] split(long begin, long end, int b, int blocks, long grain) {
        long n = Math.max(0, end - begin);
        long per = alignUp(ceilDiv(n, blocks), grain);
        long lo = Math.min(n, b * per);
        long hi = Math.min(n, lo + per);
        return new long[] {begin + lo, begin + hi};
    }

    /** Shard c [lo, hi) of n elements cut into parts shards of a multiple of grain (the last ones shorter or empty). */
    static long[] shard(long n, int c, int parts, long grain) {
        long size = alignUp(ceilDiv(n, parts), grain);
        return new long[] {Math.min(n, c * size), Math.min(n, (c + 1) * size)};
    }

    /** Blocks for a launch that moves workBytes per rank: one per bytesPerBlock, at least 1, at most maxBlocks. */
    static int blocks(long workBytes, long bytesPerBlock, int maxBlocks) {
        return (int) Math.max(1, Math.min(maxBlocks, ceilDiv(Math.max(1, workBytes), bytesPerBlock)));
    }

    /** Elements of one 16-byte vector of an element type of that size. */
    static int lanes(int elementBytes) {
        return 16 / elementBytes;
    }
}

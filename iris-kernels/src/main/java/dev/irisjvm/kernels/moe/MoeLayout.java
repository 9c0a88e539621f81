package dev.irisjvm.kernels.moe;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Where the parts of an {@link MoeDispatch}'s workspace lie (bytes from its start), and the grids
 * of the four kernels. The header is iris/abi/moe.h's (IRIS_MOE_WS_*: flags, tickets, stats, the
 * count matrix); after it, for this rank's kernels only: the per-block counts
 * (int32 [MAX_BLOCKS][experts]), the routes (int32 [maxTokens * topK]) and their weights
 * (f32 [maxTokens * topK]), each 256-byte aligned.
 *
 * @param blockCounts  offset of the per-block counts
 * @param routes       offset of each route's row in its expert (or -1)
 * @param routeWeights offset of the routing weights kept for combine
 * @param bytes        the workspace's size
 */
record MoeLayout(long blockCounts, long routes, long routeWeights, long bytes) {
    static final int THREADS = KernelAbi.IRIS_MOE_THREADS;
    static final int MAX_BLOCKS = KernelAbi.IRIS_MOE_MAX_BLOCKS;
    static final int ROUTES_PER_BLOCK = KernelAbi.IRIS_MOE_ROUTES_PER_BLOCK;
    static final long HEADER_BYTES = KernelAbi.IRIS_MOE_WS_HEADER_BYTES;
    static final long STATS = KernelAbi.IRIS_MOE_WS_STATS;
    static final long EPOCH = KernelAbi.IRIS_MOE_WS_EPOCH;
    /** Rows a block copies at once: one per IRIS_MOE_ROW_LANES threads. */
    static final int ROW_GROUPS = KernelAbi.IRIS_MOE_THREADS / KernelAbi.IRIS_MOE_ROW_LANES;

    static MoeLayout of(MoeConfig c) {
        long blockCounts = alignUp(HEADER_BYTES, 256);
        long routes = alignUp(blockCounts + (long) MAX_BLOCKS * c.experts() * 4, 256);
        long routeWeights = alignUp(routes + c.maxRoutes() * 4, 256);
        return new MoeLayout(blockCounts, routes, routeWeights, alignUp(routeWeights + c.maxRoutes() * 4, 256));
    }

    /** The grid of both dispatch kernels for that many routes: one block per ROUTES_PER_BLOCK, 1 to MAX_BLOCKS. */
    static int dispatchBlocks(long routes) {
        return (int) Math.max(1, Math.min(MAX_BLOCKS, ceilDiv(routes, ROUTES_PER_BLOCK)));
    }

    /** A grid of one thread group per row (ROW_GROUPS a block), 1 to {@code limit} blocks (the kernels stride over the rest). */
    static int rowBlocks(long rows, int limit) {
        return (int) Math.max(1, Math.min(limit, ceilDiv(rows, ROW_GROUPS)));
    }

    /** The {@code limit} of {@link #rowBlocks} on a device of that many SMs: four blocks each. */
    static int rowBlockLimit(int multiprocessors) {
        return Math.max(1, 4 * multiprocessors);
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    static long alignUp(long a, long b) {
        return ceilDiv(a, b) * b;
    }
}

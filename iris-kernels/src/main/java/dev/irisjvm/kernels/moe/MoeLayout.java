package dev.irisjvm.kernels.moe;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Where the parts of an {@link MoeDispatch}'s workspace lie (bytes from its start), and the grids
 * of its kernels. The header is iris/abi/moe.h's (IRIS_MOE_WS_*: flags, tickets, stats, the count
 * matrix); after it, for this rank's kernels only: the per-block counts (int32
 * [MAX_BLOCKS][experts]), the routes (int32 [maxTokens * topK]) and their weights (f32
 * [maxTokens * topK]), where each expert's routes start among this rank's routes grouped by expert
 * (int32 [experts]) and those routes (int32 [maxTokens * topK]); then, written by peers, the rows
 * arrived per receive-buffer tile (uint64 [experts][tilesPerExpert], room for one rank holding
 * every expert). Each part is 256-byte aligned.
 *
 * @param blockCounts  offset of the per-block counts
 * @param routes       offset of each route's row in its expert (or -1)
 * @param routeWeights offset of the routing weights kept for combine
 * @param expertBase   offset of where each expert's routes start in byExpert
 * @param byExpert     offset of this rank's routes grouped by expert
 * @param arrivals     offset of the rows arrived per tile
 * @param bytes        the workspace's size
 */
record MoeLayout(long blockCounts, long routes, long routeWeights, long expertBase, long byExpert, long arrivals, long bytes) {
    static final int THREADS = KernelAbi.IRIS_MOE_THREADS;
    static final int MAX_BLOCKS = KernelAbi.IRIS_MOE_MAX_BLOCKS;
    static final int ROUTES_PER_BLOCK = KernelAbi.IRIS_MOE_ROUTES_PER_BLOCK;
    static final long HEADER_BYTES = KernelAbi.IRIS_MOE_WS_HEADER_BYTES;
    static final long STATS = KernelAbi.IRIS_MOE_WS_STATS;
    static final long EPOCH = KernelAbi.IRIS_MOE_WS_EPOCH;
    /** The fed expert GEMM's claim counter (int32), zeroed by every dispatch. */
    static final long CLAIMS = KernelAbi.IRIS_MOE_WS_CLAIMS;
    /** Rows of a receive-buffer tile: what the copying kernel sends at once and counts arrived. */
    static final int TILE_ROWS = KernelAbi.IRIS_MOE_TILE_ROWS;
    /** Rows a block copies at once: one per IRIS_MOE_ROW_LANES threads. */
    static final int ROW_GROUPS = KernelAbi.IRIS_MOE_THREADS / KernelAbi.IRIS_MOE_ROW_LANES;

    static MoeLayout of(MoeConfig c) {
        long blockCounts = alignUp(HEADER_BYTES, 256);
        long routes = alignUp(blockCounts + (long) MAX_BLOCKS * c.experts() * 4, 256);
        long routeWeights = alignUp(routes + c.maxRoutes() * 4, 256);
        long expertBase = alignUp(routeWeights + c.maxRoutes() * 4, 256);
        long byExpert = alignUp(expertBase + c.experts() * 4L, 256);
        long arrivals = alignUp(byExpert + c.maxRoutes() * 4, 256);
        return new MoeLayout(blockCounts, routes, routeWeights, expertBase, byExpert, arrivals,
                alignUp(arrivals + c.experts() * tilesPerExpert(c) * 8, 256));
    }

    /** The grid of both dispatch kernels for that many routes: one block per ROUTES_PER_BLOCK, 1 to MAX_BLOCKS. */
    static int dispatchBlocks(long routes) {
        return (int) Math.max(1, Math.min(MAX_BLOCKS, ceilDiv(routes, ROUTES_PER_BLOCK)));
    }

    /**
     * The grid of the copying kernel: one block per tile it may send (local experts x tiles x
     * ranks), 1 to {@code limit} (it strides over the rest).
     */
    static int copyBlocks(MoeConfig c, int world, int limit) {
        long units = (long) c.experts() / world * tilesPerExpert(c) * world;
        return (int) Math.max(1, Math.min(limit, units));
    }

    /** Receive-buffer tiles of one expert (moe_common.cuh's tiles_per_expert). */
    static long tilesPerExpert(MoeConfig c) {
        return ceilDiv(c.capacity(), TILE_ROWS);
    }

    /**
     * The copying kernel's grid limit where an expert GEMM fed by the dispatch runs beside it: a
     * sixth of the SMs, the GEMM taking the rest until the copy is done.
     */
    static int feedingCopyLimit(int multiprocessors) {
        return Math.max(1, multiprocessors / 6);
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

package dev.irisjvm.kernels.moe;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Where the parts of a {@link MoeLowLatency} lie, and its grids. Its receive buffer is
 * [localExperts][world][regionRows][hidden]: local expert l has one region of regionRows =
 * maxTokens * topK rows per source rank, so row j of source src's region is row
 * {@link #row(int, int, int) (l * world + src) * regionRows + j}. The workspace is iris/abi/moe.h's
 * low-latency header (IRIS_MOE_LL_WS_*), then, for this rank's kernels only, the routes (int32
 * [regionRows]) and their weights (f32 [regionRows]), each 256-byte aligned.
 *
 * <pre>{@code
 * MoeLowLatencyLayout l = MoeLowLatencyLayout.of(MoeConfig.of(7168, 256, 8, 128, 1), 8);
 * l.regionRows();   // 1024: all of a source's routes
 * l.row(3, 5, 0);   // the first row rank 5 sent to local expert 3
 * }</pre>
 *
 * @param world        ranks of the node
 * @param localExperts experts per rank
 * @param regionRows   rows of one (local expert, source) region: maxTokens * topK
 * @param routes       workspace offset of each route's row in its region (or -1)
 * @param routeWeights workspace offset of the routing weights kept for combine
 * @param bytes        the workspace's size
 */
record MoeLowLatencyLayout(int world, int localExperts, int regionRows, long routes, long routeWeights, long bytes) {
    static final long HEADER_BYTES = KernelAbi.IRIS_MOE_LL_WS_HEADER_BYTES;

    static MoeLowLatencyLayout of(MoeConfig c, int world) {
        int regionRows = Math.toIntExact(c.maxRoutes());
        long routes = MoeLayout.alignUp(HEADER_BYTES, 256);
        long routeWeights = MoeLayout.alignUp(routes + 4L * regionRows, 256);
        return new MoeLowLatencyLayout(world, c.experts() / world, regionRows, routes, routeWeights,
                MoeLayout.alignUp(routeWeights + 4L * regionRows, 256));
    }

    /** Index of row j of source {@code src}'s region of local expert {@code l} in the receive buffer. */
    long row(int l, int src, int j) {
        return ((long) l * world + src) * regionRows + j;
    }

    /** Rows of the receive buffer: localExperts x world x regionRows. */
    long receiveRows() {
        return (long) localExperts * world * regionRows;
    }

    /** The dispatch's grid: one block per IRIS_MOE_THREADS routes, at least one (its last block does the exchange). */
    static int dispatchBlocks(long routes) {
        return Math.toIntExact(Math.max(1, MoeLayout.ceilDiv(routes, MoeLayout.THREADS)));
    }

    /** Bytes of the symmetric heap an instance takes on each rank with rows of {@code hidden} elements of {@code elementBytes}. */
    long heapBytes(int hidden, int elementBytes) {
        long recv = receiveRows() * hidden * elementBytes;
        long recvRoutes = receiveRows() * 4;
        long counts = 4L * localExperts * world;
        long staging = (long) regionRows * hidden * elementBytes;
        return bytes + MoeLayout.alignUp(recv, 256) + MoeLayout.alignUp(recvRoutes, 256) + MoeLayout.alignUp(counts, 256)
                + MoeLayout.alignUp(staging, 256);
    }
}

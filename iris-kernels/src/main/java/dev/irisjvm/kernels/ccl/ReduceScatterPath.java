package dev.irisjvm.kernels.ccl;

/**
 * How {@link Collectives#reduceScatter} moves data, chosen by size (ccl_reduce_scatter.cu). All
 * three reduce in rank order in float and round once, so they give the same bits; they differ in
 * what a call waits for.
 *
 * <table>
 * <caption>Paths</caption>
 * <tr><th>path</th><th>data movement</th><th>taken for</th></tr>
 * <tr><td>LL</td><td>shard p goes to rank p in 8-byte packets with the flag inline: no fence, no
 *     handshake, one NVLink trip</td><td>shards of whole 32-bit words up to {@link Collectives#llMaxBytes(int)}</td></tr>
 * <tr><td>PUSH</td><td>shard p goes into slot [rank] of rank p's staging buffer, then a flag; each
 *     rank reduces locally. No entry handshake</td><td>inputs up to {@link #PUSH_LIMIT_BYTES} whose W
 *     slots fit the staging buffer</td></tr>
 * <tr><td>PULL</td><td>after every peer has arrived, rank r reads shard r of every input and
 *     reduces as it reads</td><td>everything else</td></tr>
 * </table>
 */
enum ReduceScatterPath {
    LL("ll"),
    PUSH("push"),
    PULL("pull");

    /**
     * PUSH takes inputs up to this many bytes per rank. It saves PULL's entry handshake (an
     * NVLink round trip) but reduces after the transfer instead of during it, which costs more
     * than the handshake once the input is several MiB; on 2 x H200 PULL already beat NCCL from
     * 4 MiB while it lost to it by 0.3 us at 1 MiB.
     */
    static final long PUSH_LIMIT_BYTES = 1L << 20;

    private final String kernelName;

    ReduceScatterPath(String kernelName) {
        this.kernelName = kernelName;
    }

    /** The path part of the kernel names ({@code ccl_reduce_scatter_<this>_<type>_<op>}). */
    String kernelName() {
        return kernelName;
    }

    /**
     * The path for an output (shard) of {@code shardBytes} bytes per rank on {@code world} ranks
     * with staging buffers of {@code stagingBytes} each (ccl_reduce_scatter.cu's requirements).
     */
    static ReduceScatterPath choose(long shardBytes, int world, long stagingBytes) {
        if (shardBytes % 4 == 0 && shardBytes <= Collectives.llMaxBytes(world)) {
            return LL;
        }
        if (shardBytes * world <= PUSH_LIMIT_BYTES && CclChecks.oneShotStagingBytes(shardBytes, world) <= stagingBytes) {
            return PUSH;
        }
        return PULL;
    }
}

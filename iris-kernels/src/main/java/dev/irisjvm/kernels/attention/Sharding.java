package dev.irisjvm.kernels.attention;

/**
 * How a sequence of {@code S} tokens is cut into {@code world} shards of {@code S / world} for
 * {@link RingAttention} (Q, K and V alike). With a causal mask, contiguous shards leave the first
 * ranks idle for most steps (their queries see few keys); zig-zag sharding balances the work.
 *
 * <ul>
 * <li>{@link #ZIG_ZAG}: the sequence is cut into {@code 2 world} chunks of {@code S / (2 world)};
 *     rank {@code r} holds chunks {@code r} and {@code 2 world - 1 - r}, in that order. Every rank
 *     then has the same number of visible (query, key) pairs. The shard length must be a multiple of
 *     256 (chunks of a multiple of 128).</li>
 * <li>{@link #CONTIGUOUS}: rank {@code r} holds tokens {@code [r S / world, (r + 1) S / world)}.</li>
 * </ul>
 *
 * <pre>{@code
 * int shard = 16384;                                       // S = 32768 on 2 ranks
 * Sharding.ZIG_ZAG.chunks(0, 2, shard);                    // Chunks(8192, 0, 3)
 * Sharding.ZIG_ZAG.globalPosition(1, 2, shard, 8192);      // 16384: rank 1's second chunk is chunk 2
 * }</pre>
 */
public enum Sharding {
    ZIG_ZAG,
    CONTIGUOUS;

    /** Rank {@code rank}'s chunks when every shard has {@code shardLen} rows. */
    public Chunks chunks(int rank, int world, int shardLen) {
        check("attention sharding", rank, world, shardLen);
        return switch (this) {
            case ZIG_ZAG -> new Chunks(shardLen / 2, rank, 2 * world - 1 - rank);
            case CONTIGUOUS -> Chunks.single(shardLen, rank);
        };
    }

    /** The global position of rank {@code rank}'s local row {@code row}. */
    public int globalPosition(int rank, int world, int shardLen, int row) {
        if (row < 0 || row >= shardLen) {
            throw new IndexOutOfBoundsException("row " + row + " is outside a shard of " + shardLen);
        }
        return chunks(rank, world, shardLen).position(row);
    }

    /**
     * Which rank holds global position {@code position}, and at which local row: {@code {rank, row}}.
     * The inverse of {@link #globalPosition}.
     */
    public int[] locate(int world, int shardLen, int position) {
        if (position < 0 || position >= (long) world * shardLen) {
            throw new IndexOutOfBoundsException("position " + position + " is outside a sequence of " + world + " x " + shardLen);
        }
        if (this == CONTIGUOUS) {
            return new int[] {position / shardLen, position % shardLen};
        }
        int half = shardLen / 2;
        int chunk = position / half;
        int offset = position % half;
        return chunk < world ? new int[] {chunk, offset} : new int[] {2 * world - 1 - chunk, half + offset};
    }

    /** The shard length this sharding accepts on {@code world} ranks; throws naming the rule otherwise. */
    void check(String op, int rank, int world, int shardLen) {
        if (world < 1) {
            throw AttentionChecks.fail(op, "world = " + world + " must be >= 1");
        }
        if (rank < 0 || rank >= world) {
            throw AttentionChecks.fail(op, "rank " + rank + " is outside [0, " + world + ")");
        }
        AttentionChecks.sequence(op, "shard length", shardLen);
        if (this == ZIG_ZAG && shardLen % (2 * AttentionChecks.TILE) != 0) {
            throw AttentionChecks.fail(op, "shard length " + shardLen + " is not a multiple of " + 2 * AttentionChecks.TILE
                    + ": zig-zag sharding cuts each shard into two chunks of a multiple of " + AttentionChecks.TILE + " rows");
        }
        if ((long) world * shardLen > Integer.MAX_VALUE) {
            throw AttentionChecks.fail(op, "world x shard length = " + (long) world * shardLen + " exceeds 2^31 - 1");
        }
    }
}

package dev.irisjvm.kernels.attention;

/**
 * Where a shard's rows sit in the whole sequence, as the ring-attention kernels take it
 * ({@code iris_attention_chunks}: {@code len, first, second}, iris/abi/attention.h): local row
 * {@code i} lies in local chunk {@code i / length} (0 or 1), whose global chunk id is {@code first}
 * or {@code second}, so its global position is {@code id * length + i % length}. A causal step shows key {@code j} to query {@code i} when the
 * key's global position is at most the query's. A shard of one chunk has {@code length} equal to
 * the shard length (then {@code second} is never used).
 *
 * <pre>{@code
 * Chunks c = Sharding.ZIG_ZAG.chunks(1, 2, 8192);   // rank 1 of 2: chunks 1 and 2 of 4096 rows
 * c.position(0);      // 4096
 * c.position(4096);   // 8192
 * }</pre>
 *
 * @param length rows per chunk, a positive multiple of 128
 * @param first  global chunk id of local rows [0, length)
 * @param second global chunk id of local rows [length, 2 length)
 */
public record Chunks(int length, int first, int second) {
    public Chunks {
        String op = "attention chunks";
        AttentionChecks.sequence(op, "length", length);
        if (first < 0 || second < 0) {
            throw AttentionChecks.fail(op, "chunk ids must be >= 0, got first = " + first + ", second = " + second);
        }
        if ((long) Math.max(first, second) * length + length > Integer.MAX_VALUE) {
            throw AttentionChecks.fail(op, "chunk ids " + first + ", " + second + " of " + length
                    + " rows reach past position 2^31 - 1 (the kernel compares positions as ints)");
        }
    }

    /** One chunk of {@code length} rows with id {@code id} (a contiguous shard). */
    public static Chunks single(int length, int id) {
        return new Chunks(length, id, id);
    }

    /** The global position of local row {@code row} ({@code 0 <= row < 2 length}). */
    public int position(int row) {
        if (row < 0 || row >= 2L * length) {
            throw new IndexOutOfBoundsException("row " + row + " is outside the two chunks of " + length + " rows");
        }
        return (row < length ? first : second) * length + row % length;
    }

    /** Checks that a shard of {@code shardLen} rows is one or two whole chunks. */
    void checkShard(String op, String name, int shardLen) {
        if (shardLen != length && shardLen != 2 * length) {
            throw AttentionChecks.fail(op, name + " = " + shardLen + " rows is neither one nor two chunks of " + length
                    + " rows (the step kernel knows two chunks per shard)");
        }
    }
}

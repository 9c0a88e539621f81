package dev.irisjvm.core.heap;

/**
 * A range of the symmetric heap: {@code size} bytes starting at byte {@code offset}.
 *
 * <p>In {@link HeapAllocator#liveBlocksSnapshot()} the size is the size that was requested; in
 * {@link HeapAllocator#freeBlocksSnapshot()} it is the full extent of the free range.
 */
public record Block(long offset, long size) {
    public Block {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        }
        if (size <= 0) {
            throw new IllegalArgumentException("size must be > 0, got " + size);
        }
        if (offset > Long.MAX_VALUE - size) {
            throw new IllegalArgumentException(
                    "offset + size must not exceed Long.MAX_VALUE, got offset " + offset + " and size " + size);
        }
    }

    /** One past the last byte; the constructor guarantees it does not overflow. */
    public long end() {
        return offset + size;
    }
}

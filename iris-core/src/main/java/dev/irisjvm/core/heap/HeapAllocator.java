package dev.irisjvm.core.heap;

import dev.irisjvm.core.IrisOutOfMemoryException;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Offset bookkeeping for the symmetric heap: an aligned, best-fit, coalescing free-list allocator.
 *
 * <p>The symmetric heap is one device buffer of the same size on every GPU rank. Allocation is
 * collective: every rank runs its own {@code HeapAllocator} with the same calls in the same order,
 * and because every decision here is a pure function of that call sequence, every rank gets the
 * same offsets. That is what lets a rank address a peer's tensor by its local offset. No native
 * memory is touched; this class only hands out and takes back ranges of {@code [0, capacity)}.
 *
 * <p>Policy: best fit. A request takes the smallest free block that can hold it at the requested
 * alignment, ties going to the lowest offset. Unlike Iris's bump pointer, freed blocks are reused
 * and coalesce with free neighbours on both sides, so freeing everything restores one free block
 * {@code [reservedBytes(), capacity())}.
 *
 * <p>Every block starts on a multiple of {@link #DEFAULT_ALIGNMENT} and its extent is rounded up
 * to that unit, so every free fragment stays aligned too. The prefix {@code [0, reservedBytes())}
 * is never handed out; the runtime keeps its barrier and signal pads there.
 *
 * <p>The public methods are {@code synchronized}, so one instance may be shared between threads;
 * but collective allocation still requires each rank to issue its calls in one agreed order.
 *
 * <pre>{@code
 * HeapAllocator heap = new HeapAllocator(1L << 30, 4096);   // 1 GiB, 4 KiB of runtime pads
 * long a = heap.allocate(1000);                             // 4096: first offset after the pads
 * long b = heap.allocate(1 << 20, 1 << 20);                 // 1 MiB, 1 MiB-aligned: 1048576
 * heap.free(a);
 * long c = heap.allocate(512);                              // reuses a's block: 4096
 * heap.liveBlocksSnapshot();                                // [Block[offset=4096, size=512], Block[offset=1048576, size=1048576]]
 * }</pre>
 */
public final class HeapAllocator {
    /** Every block starts on a multiple of this, and every extent is a multiple of it (except at a ragged heap end). */
    public static final long DEFAULT_ALIGNMENT = 256;

    /** Orders free blocks for best fit; the offset tie-break keeps the choice deterministic. */
    private static final Comparator<Block> BY_SIZE_THEN_OFFSET =
            Comparator.comparingLong(Block::size).thenComparingLong(Block::offset);

    /** A live block: what the caller asked for, and the (rounded-up) extent it actually occupies. */
    private record Live(long requested, long extent) {}

    private final long capacity;
    private final long reserved;
    /** Free blocks by offset, for finding neighbours to coalesce with. */
    private final TreeMap<Long, Long> freeByOffset = new TreeMap<>();
    /** The same free blocks by size, for best fit and the largest free block. */
    private final NavigableSet<Block> freeBySize = new TreeSet<>(BY_SIZE_THEN_OFFSET);
    /** Live blocks by offset, so an invalid free can name the block it landed in. */
    private final TreeMap<Long, Live> live = new TreeMap<>();
    private long freeBytes;
    private long usedBytes;

    /**
     * @param capacityBytes       size of the heap on each rank, {@code > 0}
     * @param reservedPrefixBytes bytes at the start of the heap that are never handed out,
     *                            {@code 0 <= reservedPrefixBytes < capacityBytes}; rounded up to
     *                            {@link #DEFAULT_ALIGNMENT}, and the rounded value must also be
     *                            below the capacity
     */
    public HeapAllocator(long capacityBytes, long reservedPrefixBytes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacityBytes must be > 0, got " + capacityBytes);
        }
        if (reservedPrefixBytes < 0 || reservedPrefixBytes >= capacityBytes) {
            throw new IllegalArgumentException("reservedPrefixBytes must be in [0, capacityBytes = "
                    + capacityBytes + "), got " + reservedPrefixBytes);
        }
        long roundedReserved = alignUpSaturating(reservedPrefixBytes, DEFAULT_ALIGNMENT);
        if (roundedReserved >= capacityBytes) {
            throw new IllegalArgumentException("reservedPrefixBytes " + reservedPrefixBytes
                    + " rounded up to a multiple of " + DEFAULT_ALIGNMENT + " leaves no room in capacityBytes "
                    + capacityBytes);
        }
        this.capacity = capacityBytes;
        this.reserved = roundedReserved;
        addFree(reserved, capacity - reserved);
    }

    /** Allocates {@code bytes} at {@link #DEFAULT_ALIGNMENT}; see {@link #allocate(long, long)}. */
    public synchronized long allocate(long bytes) {
        return allocate(bytes, DEFAULT_ALIGNMENT);
    }

    /**
     * Allocates a block of {@code bytes} whose offset is a multiple of {@code alignment}.
     *
     * @param bytes     requested size, {@code > 0}
     * @param alignment any power of two; values below {@link #DEFAULT_ALIGNMENT} get that alignment anyway
     * @return the offset of the new block, the same on every rank that made the same calls
     * @throws IllegalArgumentException if {@code bytes <= 0} or {@code alignment} is not a power of two
     * @throws IrisOutOfMemoryException if no free block can hold the request at that alignment
     */
    public synchronized long allocate(long bytes, long alignment) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0, got " + bytes);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        long align = Math.max(alignment, DEFAULT_ALIGNMENT);
        // Saturating is safe: the rounded size is only ever compared with, or clipped to, extents inside the heap.
        long rounded = alignUpSaturating(bytes, DEFAULT_ALIGNMENT);

        Block fit = null;
        long start = 0;
        // Blocks smaller than the raw request cannot fit; walk the rest smallest first. With the
        // default alignment the first candidate fits; larger alignments may have to skip blocks
        // whose aligned start leaves too little room.
        for (Block candidate : freeBySize.tailSet(new Block(0, bytes), true)) {
            long alignedStart = alignUpSaturating(candidate.offset(), align);
            if (alignedStart <= candidate.end() - bytes) {
                fit = candidate;
                start = alignedStart;
                break;
            }
        }
        if (fit == null) {
            throw outOfMemory(bytes, align);
        }
        // Only the heap's last block can have an end that is not a multiple of the unit;
        // there the extent is clipped to it rather than reaching past the capacity.
        long extent = Math.min(rounded, fit.end() - start);
        removeFree(fit);
        if (start > fit.offset()) {
            addFree(fit.offset(), start - fit.offset());
        }
        if (start + extent < fit.end()) {
            addFree(start + extent, fit.end() - (start + extent));
        }
        live.put(start, new Live(bytes, extent));
        usedBytes += extent;
        return start;
    }

    /**
     * Returns the block starting at {@code offset} to the free list, merging it with free neighbours.
     *
     * @throws IllegalStateException if no live block starts at {@code offset} (a double free, or an
     *                               offset that never came from {@link #allocate})
     */
    public synchronized void free(long offset) {
        Live block = live.remove(offset);
        if (block == null) {
            throw new IllegalStateException(invalidOffsetMessage("double free or invalid free", offset));
        }
        usedBytes -= block.extent();
        long start = offset;
        long end = offset + block.extent();
        Map.Entry<Long, Long> left = freeByOffset.lowerEntry(start);
        if (left != null && left.getKey() + left.getValue() == start) {
            removeFree(new Block(left.getKey(), left.getValue()));
            start = left.getKey();
        }
        Long rightSize = freeByOffset.get(end);
        if (rightSize != null) {
            removeFree(new Block(end, rightSize));
            end += rightSize;
        }
        addFree(start, end - start);
    }

    /**
     * The size that was requested for the live block at {@code offset} (not the rounded-up extent).
     *
     * @throws IllegalStateException if no live block starts at {@code offset}
     */
    public synchronized long sizeOf(long offset) {
        Live block = live.get(offset);
        if (block == null) {
            throw new IllegalStateException(invalidOffsetMessage("sizeOf", offset));
        }
        return block.requested();
    }

    /** Whether a live block starts exactly at {@code offset}. */
    public synchronized boolean isLive(long offset) {
        return live.containsKey(offset);
    }

    /** The heap size given to the constructor. */
    public synchronized long capacity() {
        return capacity;
    }

    /** The never-allocated prefix, after rounding up to {@link #DEFAULT_ALIGNMENT}. */
    public synchronized long reservedBytes() {
        return reserved;
    }

    /**
     * Bytes taken by live blocks, counting each block's rounded-up extent, so that
     * {@code usedBytes() + freeBytes() == capacity() - reservedBytes()} always holds.
     */
    public synchronized long usedBytes() {
        return usedBytes;
    }

    /** Total bytes in free blocks, which may be spread over several blocks; see {@link #largestFreeBlock()}. */
    public synchronized long freeBytes() {
        return freeBytes;
    }

    /** The size of the largest free block, 0 if the heap is full; an upper bound on what one allocation can get. */
    public synchronized long largestFreeBlock() {
        return freeBySize.isEmpty() ? 0 : freeBySize.last().size();
    }

    /** Number of live blocks. */
    public synchronized int liveBlocks() {
        return live.size();
    }

    /** Number of free blocks; more than one with nothing live would mean coalescing failed. */
    public synchronized int freeBlockCount() {
        return freeByOffset.size();
    }

    /** The live blocks as (offset, requested size), in offset order; an immutable copy, for leak reports. */
    public synchronized List<Block> liveBlocksSnapshot() {
        List<Block> blocks = new ArrayList<>(live.size());
        live.forEach((offset, block) -> blocks.add(new Block(offset, block.requested())));
        return List.copyOf(blocks);
    }

    /** The free blocks in offset order; an immutable copy, for fragmentation diagnostics. */
    public synchronized List<Block> freeBlocksSnapshot() {
        List<Block> blocks = new ArrayList<>(freeByOffset.size());
        freeByOffset.forEach((offset, size) -> blocks.add(new Block(offset, size)));
        return List.copyOf(blocks);
    }

    @Override
    public synchronized String toString() {
        return "HeapAllocator[capacity " + human(capacity) + ", used " + human(usedBytes) + " in " + live.size()
                + " blocks, free " + human(freeBytes) + " in " + freeByOffset.size() + " blocks]";
    }

    private void addFree(long offset, long size) {
        freeByOffset.put(offset, size);
        freeBySize.add(new Block(offset, size));
        freeBytes += size;
    }

    private void removeFree(Block block) {
        freeByOffset.remove(block.offset());
        freeBySize.remove(block);
        freeBytes -= block.size();
    }

    private IrisOutOfMemoryException outOfMemory(long bytes, long align) {
        long largest = largestFreeBlock();
        StringBuilder message = new StringBuilder("symmetric heap out of memory: requested ")
                .append(humanWithBytes(bytes));
        if (align > DEFAULT_ALIGNMENT) {
            message.append(" aligned to ").append(human(align));
        }
        message.append(", free ").append(humanWithBytes(freeBytes))
                .append(" in ").append(freeByOffset.size()).append(freeByOffset.size() == 1 ? " block" : " blocks")
                .append(", largest free block ").append(humanWithBytes(largest))
                .append(", heap ").append(humanWithBytes(capacity));
        // Say why, because "free 512 MiB" next to a failed 256 MiB request otherwise looks like a bug.
        if (largest >= bytes) {
            message.append(" (no free block large enough has room at that alignment)");
        } else if (freeBytes >= bytes) {
            message.append(" (fragmented: enough bytes are free in total, but no single free block is large enough)");
        }
        message.append("; free tensors or raise IRIS_HEAP_SIZE");
        return new IrisOutOfMemoryException(message.toString(), bytes, freeBytes, largest);
    }

    private String invalidOffsetMessage(String what, long offset) {
        String prefix = what + " of heap offset " + offset + ": ";
        if (offset < 0 || offset >= capacity) {
            return prefix + "outside the heap [0, " + capacity + ")";
        }
        if (offset < reserved) {
            return prefix + "inside the reserved prefix [0, " + reserved + "), which is never allocated";
        }
        Map.Entry<Long, Live> before = live.lowerEntry(offset);
        if (before != null && offset < before.getKey() + before.getValue().extent()) {
            return prefix + "it lies inside the live block at offset " + before.getKey() + " (size "
                    + before.getValue().requested() + " bytes); pass the offset that allocate returned";
        }
        return prefix + "no live block starts there";
    }

    /** Rounds up to a power-of-two multiple, giving Long.MAX_VALUE where the true result would overflow. */
    private static long alignUpSaturating(long value, long alignment) {
        if (value > Long.MAX_VALUE - (alignment - 1)) {
            return Long.MAX_VALUE;
        }
        return (value + alignment - 1) & -alignment;
    }

    private static String humanWithBytes(long bytes) {
        return bytes < 1024 ? human(bytes) : human(bytes) + " (" + bytes + " bytes)";
    }

    /** Binary units with one decimal, e.g. "600.0 MiB"; plain bytes below 1 KiB. */
    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int unit = (63 - Long.numberOfLeadingZeros(bytes)) / 10 - 1;
        return String.format(Locale.ROOT, "%.1f %s", bytes / Math.pow(1024, unit + 1), units[unit]);
    }
}

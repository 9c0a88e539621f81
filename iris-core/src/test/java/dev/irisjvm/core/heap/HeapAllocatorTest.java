package dev.irisjvm.core.heap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisOutOfMemoryException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class HeapAllocatorTest {
    private static final long KiB = 1L << 10;
    private static final long MiB = 1L << 20;
    private static final long GiB = 1L << 30;
    private static final long UNIT = HeapAllocator.DEFAULT_ALIGNMENT;

    @Nested
    class Construction {
        @Test
        void startsWithOneFreeBlockAfterThePrefix() {
            HeapAllocator heap = new HeapAllocator(GiB, 4096);
            assertEquals(GiB, heap.capacity());
            assertEquals(4096, heap.reservedBytes());
            assertEquals(0, heap.usedBytes());
            assertEquals(GiB - 4096, heap.freeBytes());
            assertEquals(GiB - 4096, heap.largestFreeBlock());
            assertEquals(List.of(new Block(4096, GiB - 4096)), heap.freeBlocksSnapshot());
            assertEquals(0, heap.liveBlocks());
            assertEquals(List.of(), heap.liveBlocksSnapshot());
        }

        @Test
        void reservedPrefixIsRoundedUpToTheUnit() {
            HeapAllocator heap = new HeapAllocator(MiB, 100);
            assertEquals(UNIT, heap.reservedBytes());
            assertEquals(UNIT, heap.allocate(1));
            assertEquals(0, new HeapAllocator(MiB, 0).allocate(1));
            assertEquals(512, new HeapAllocator(MiB, 257).reservedBytes());
        }

        @Test
        void rejectsBadCapacityAndPrefix() {
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> new HeapAllocator(0, 0)),
                    "capacityBytes must be > 0, got 0");
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> new HeapAllocator(-1, 0)),
                    "capacityBytes");
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> new HeapAllocator(MiB, -1)),
                    "reservedPrefixBytes must be in [0, capacityBytes = 1048576), got -1");
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> new HeapAllocator(MiB, MiB)),
                    "reservedPrefixBytes");
            // 100 < 200, but rounding the prefix to 256 swallows the whole heap.
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> new HeapAllocator(200, 100)),
                    "leaves no room");
            assertMessageContains(assertThrows(IllegalArgumentException.class,
                    () -> new HeapAllocator(Long.MAX_VALUE, Long.MAX_VALUE - 1)), "leaves no room");
        }
    }

    @Nested
    class Arguments {
        private final HeapAllocator heap = new HeapAllocator(MiB, 0);

        @Test
        void rejectsNonPositiveSizes() {
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> heap.allocate(0)),
                    "bytes must be > 0, got 0");
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> heap.allocate(-5, 4096)),
                    "bytes must be > 0, got -5");
            assertMessageContains(assertThrows(IllegalArgumentException.class, () -> heap.allocate(Long.MIN_VALUE)),
                    "bytes");
            assertUntouched(heap);
        }

        @Test
        void rejectsAlignmentsThatAreNotPowersOfTwo() {
            for (long alignment : new long[] {0, -256, 3, 384, 4097, Long.MIN_VALUE, Long.MAX_VALUE}) {
                IllegalArgumentException e =
                        assertThrows(IllegalArgumentException.class, () -> heap.allocate(64, alignment));
                assertMessageContains(e, "alignment must be a power of two, got " + alignment);
            }
            assertUntouched(heap);
        }

        private void assertUntouched(HeapAllocator h) {
            assertEquals(0, h.liveBlocks());
            assertEquals(MiB, h.freeBytes());
        }
    }

    @Nested
    class Alignment {
        @Test
        void everyOffsetIsAMultipleOfTheDefaultAlignment() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long[] sizes = {1, 3, 255, 256, 257, 1000, 4095, 12345, 7};
            for (long size : sizes) {
                long offset = heap.allocate(size);
                assertEquals(0, offset % UNIT, "offset " + offset + " for size " + size);
                assertEquals(size, heap.sizeOf(offset));
            }
            // Requests below the default alignment still get it.
            for (long alignment : new long[] {1, 2, 8, 64, 128}) {
                assertEquals(0, heap.allocate(3, alignment) % UNIT);
            }
        }

        @Test
        void honoursLargeAlignments() {
            HeapAllocator heap = new HeapAllocator(64 * MiB, 4096);
            heap.allocate(100);                      // pushes the free start off every large boundary
            long a = heap.allocate(5000, 4096);
            assertEquals(0, a % 4096);
            long b = heap.allocate(3 * MiB + 1, MiB);
            assertEquals(0, b % MiB);
            long c = heap.allocate(1, MiB);
            assertEquals(0, c % MiB);
            long d = heap.allocate(100, 8 * MiB);
            assertEquals(0, d % (8 * MiB));
            assertInvariants(heap);
        }

        @Test
        void leadingFragmentGoesBackToTheFreeList() {
            HeapAllocator heap = new HeapAllocator(4 * MiB, 0);
            assertEquals(0, heap.allocate(1000));                 // extent [0, 1024)
            assertEquals(MiB, heap.allocate(MiB, MiB));           // skips [1024, 1 MiB)
            assertEquals(List.of(new Block(1024, MiB - 1024), new Block(2 * MiB, 2 * MiB)),
                    heap.freeBlocksSnapshot());
            assertEquals(4 * MiB - 1024 - MiB, heap.freeBytes());
            // Best fit: the leading fragment is the smallest block that fits.
            assertEquals(1024, heap.allocate(4096));
            assertInvariants(heap);
        }

        @Test
        void skipsBestFitCandidatesWhoseAlignedStartLeavesTooLittleRoom() {
            HeapAllocator heap = new HeapAllocator(8 * MiB, 0);
            long a = heap.allocate(UNIT);                     // [0, 256)
            long hole = heap.allocate(MiB);                   // [256, 1 MiB + 256): 1 MiB, but misaligned
            heap.allocate(UNIT);                              // keeps the hole from merging with the tail
            heap.free(hole);
            assertEquals(new Block(UNIT, MiB), heap.freeBlocksSnapshot().get(0));
            // The 1 MiB hole is the best fit by size, but a 1 MiB-aligned 1 MiB block cannot start in it.
            long b = heap.allocate(MiB, MiB);
            assertEquals(0, b % MiB);
            assertTrue(b >= 2 * MiB, "must come from the tail, got " + b);
            assertTrue(heap.isLive(a));
            assertInvariants(heap);
        }

        @Test
        void javadocExampleHolds() {
            HeapAllocator heap = new HeapAllocator(1L << 30, 4096);
            long a = heap.allocate(1000);
            assertEquals(4096, a);
            long b = heap.allocate(1 << 20, 1 << 20);
            assertEquals(1048576, b);
            heap.free(a);
            assertEquals(4096, heap.allocate(512));
            assertEquals(List.of(new Block(4096, 512), new Block(1048576, 1048576)), heap.liveBlocksSnapshot());
        }
    }

    @Nested
    class ReservedPrefix {
        @Test
        void isNeverHandedOutEvenWhenTheHeapIsFull() {
            long reserved = 8192;
            HeapAllocator heap = new HeapAllocator(256 * KiB, reserved);
            List<Long> offsets = new ArrayList<>();
            while (true) {
                try {
                    offsets.add(heap.allocate(UNIT));
                } catch (IrisOutOfMemoryException e) {
                    break;
                }
            }
            assertEquals((256 * KiB - reserved) / UNIT, offsets.size());
            for (long offset : offsets) {
                assertTrue(offset >= reserved, "offset " + offset + " is inside the reserved prefix");
            }
            // Free in a scattered order and reallocate with every alignment: still never below the prefix.
            for (int i = 0; i < offsets.size(); i += 3) {
                heap.free(offsets.get(i));
            }
            for (long alignment = 1; alignment <= 4096; alignment <<= 1) {
                try {
                    assertTrue(heap.allocate(UNIT, alignment) >= reserved);
                } catch (IrisOutOfMemoryException e) {
                    // A large alignment may find no room; that is fine, a wrong offset is not.
                }
            }
            assertInvariants(heap);
        }
    }

    @Nested
    class ReuseAndCoalescing {
        @Test
        void freedBlockIsReused() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long a = heap.allocate(4096);
            long b = heap.allocate(4096);
            long c = heap.allocate(4096);
            heap.free(b);
            assertFalse(heap.isLive(b));
            assertEquals(b, heap.allocate(4096));
            assertTrue(heap.isLive(a) && heap.isLive(c));
        }

        @Test
        void bestFitPrefersTheSmallestHoleOverTheLowestOne() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long big = heap.allocate(8192);        // [0, 8192)
            heap.allocate(UNIT);
            long small = heap.allocate(4096);      // [8448, 12544)
            heap.allocate(UNIT);
            heap.free(big);
            heap.free(small);
            assertEquals(small, heap.allocate(4000));
            assertEquals(big, heap.allocate(4097)); // does not fit the small hole any more
        }

        @Test
        void coalescesWithTheLeftNeighbour() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long a = heap.allocate(4096);
            long b = heap.allocate(4096);
            heap.allocate(4096);                   // c: keeps b from touching the tail
            long tail = MiB - 3 * 4096;
            heap.free(a);
            assertEquals(2, heap.freeBlockCount());
            heap.free(b);                          // merges into a's free block on its left
            assertEquals(List.of(new Block(0, 8192), new Block(3 * 4096, tail)), heap.freeBlocksSnapshot());
            assertEquals(tail + 8192, heap.freeBytes());
            assertEquals(Math.max(tail, 8192), heap.largestFreeBlock());
            assertEquals(0, heap.allocate(8192), "the merged block serves a request neither half could");
        }

        @Test
        void coalescesWithTheRightNeighbour() {
            HeapAllocator heap = new HeapAllocator(64 * KiB, 0);
            long a = heap.allocate(4096);
            long b = heap.allocate(4096);
            long c = heap.allocate(4096);
            heap.allocate(52 * KiB);               // fills the rest: no tail block
            assertEquals(0, heap.freeBlockCount());
            assertEquals(0, heap.largestFreeBlock());
            heap.free(c);
            heap.free(b);                          // merges into c's free block on its right
            assertEquals(List.of(new Block(b, 8192)), heap.freeBlocksSnapshot());
            assertEquals(8192, heap.freeBytes());
            assertEquals(8192, heap.largestFreeBlock());
            assertTrue(heap.isLive(a));
        }

        @Test
        void coalescesWithBothNeighbours() {
            HeapAllocator heap = new HeapAllocator(64 * KiB, 0);
            long a = heap.allocate(4096);
            long b = heap.allocate(8192);
            long c = heap.allocate(4096);
            long d = heap.allocate(4096);
            heap.free(a);
            heap.free(c);
            assertEquals(3, heap.freeBlockCount());  // a, c and the tail
            heap.free(b);                            // bridges a and c
            assertEquals(List.of(new Block(0, 16 * KiB), new Block(d + 4096, 64 * KiB - 20 * KiB)),
                    heap.freeBlocksSnapshot());
            assertEquals(2, heap.freeBlockCount());
            assertEquals(60 * KiB, heap.freeBytes());
            heap.free(d);                            // bridges the merged block and the tail
            assertEquals(List.of(new Block(0, 64 * KiB)), heap.freeBlocksSnapshot());
            assertEquals(64 * KiB, heap.largestFreeBlock());
        }

        @Test
        void freeingEverythingRestoresOneBlock() {
            HeapAllocator heap = new HeapAllocator(16 * MiB, 1000);
            List<Long> offsets = new ArrayList<>();
            for (int i = 1; i <= 200; i++) {
                offsets.add(heap.allocate(i * 37L, 1L << (i % 14)));
            }
            for (int i = 0; i < offsets.size(); i += 2) {
                heap.free(offsets.get(i));
            }
            for (int i = offsets.size() - 1; i >= 1; i -= 2) {
                heap.free(offsets.get(i));
            }
            assertEquals(List.of(new Block(1024, 16 * MiB - 1024)), heap.freeBlocksSnapshot());
            assertEquals(0, heap.usedBytes());
            assertEquals(0, heap.liveBlocks());
            assertEquals(16 * MiB - 1024, heap.largestFreeBlock());
        }
    }

    @Nested
    class OutOfMemory {
        @Test
        void fragmentationIsVisibleInTheMessage() {
            HeapAllocator heap = new HeapAllocator(GiB, 0);
            List<Long> offsets = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                offsets.add(heap.allocate(128 * MiB));
            }
            for (int i = 0; i < 8; i += 2) {
                heap.free(offsets.get(i));
            }
            IrisOutOfMemoryException e =
                    assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(256 * MiB));
            assertEquals("symmetric heap out of memory: requested 256.0 MiB (268435456 bytes), "
                    + "free 512.0 MiB (536870912 bytes) in 4 blocks, "
                    + "largest free block 128.0 MiB (134217728 bytes), heap 1.0 GiB (1073741824 bytes) "
                    + "(fragmented: enough bytes are free in total, but no single free block is large enough); "
                    + "free tensors or raise IRIS_HEAP_SIZE", e.getMessage());
            assertEquals(256 * MiB, e.requestedBytes());
            assertEquals(512 * MiB, e.freeBytes());
            assertEquals(128 * MiB, e.largestFreeBlock());
            assertTrue(e instanceof IrisException && e instanceof RuntimeException);
            // The failed request changed nothing.
            assertEquals(4, heap.liveBlocks());
            assertEquals(512 * MiB, heap.freeBytes());
        }

        @Test
        void plainShortageSaysSoWithoutClaimingFragmentation() {
            HeapAllocator heap = new HeapAllocator(GiB, 0);
            heap.allocate(256 * MiB);
            long b = heap.allocate(256 * MiB);
            heap.allocate(256 * MiB);
            heap.free(b);                             // free: 256 MiB hole + 256 MiB tail
            IrisOutOfMemoryException e =
                    assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(600 * MiB));
            assertEquals("symmetric heap out of memory: requested 600.0 MiB (629145600 bytes), "
                    + "free 512.0 MiB (536870912 bytes) in 2 blocks, "
                    + "largest free block 256.0 MiB (268435456 bytes), heap 1.0 GiB (1073741824 bytes); "
                    + "free tensors or raise IRIS_HEAP_SIZE", e.getMessage());
        }

        @Test
        void alignmentShortageIsExplained() {
            HeapAllocator heap = new HeapAllocator(2 * MiB, 0);
            heap.allocate(UNIT);                       // free: [256, 2 MiB)
            IrisOutOfMemoryException e =
                    assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(MiB + 1, MiB));
            assertMessageContains(e, "aligned to 1.0 MiB");
            assertMessageContains(e, "no free block large enough has room at that alignment");
        }

        @Test
        void exactFillToCapacityThenOutOfMemory() {
            HeapAllocator heap = new HeapAllocator(MiB, 4096);
            long offset = heap.allocate(MiB - 4096);
            assertEquals(4096, offset);
            assertEquals(0, heap.freeBytes());
            assertEquals(0, heap.largestFreeBlock());
            assertEquals(0, heap.freeBlockCount());
            assertEquals(MiB - 4096, heap.usedBytes());
            IrisOutOfMemoryException e = assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(1));
            assertEquals("symmetric heap out of memory: requested 1 B, free 0 B in 0 blocks, largest free block 0 B, "
                    + "heap 1.0 MiB (1048576 bytes); free tensors or raise IRIS_HEAP_SIZE", e.getMessage());
            heap.free(offset);
            assertEquals(List.of(new Block(4096, MiB - 4096)), heap.freeBlocksSnapshot());
        }

        @Test
        void exactFillWithManySmallBlocks() {
            HeapAllocator heap = new HeapAllocator(64 * KiB, 0);
            for (int i = 0; i < 64 * KiB / UNIT; i++) {
                assertEquals(i * UNIT, heap.allocate(UNIT - (i % 7)));
            }
            assertEquals(0, heap.freeBytes());
            assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(1));
            assertInvariants(heap);
        }

        @Test
        void raggedHeapEndIsUsableToTheLastByte() {
            HeapAllocator heap = new HeapAllocator(1000, 0);
            assertEquals(0, heap.allocate(1000));
            assertEquals(1000, heap.usedBytes());
            assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(1));
            heap.free(0);
            assertEquals(0, heap.allocate(600));
            assertEquals(768, heap.allocate(232));    // the 232-byte ragged tail
            assertInvariants(heap);
        }

        @Test
        void hugeRequestsNeverOverflowIntoAWrongOffset() {
            HeapAllocator heap = new HeapAllocator(GiB, 4096);
            for (long bytes : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MAX_VALUE - 255, GiB + 1,
                    GiB - 4095}) {
                assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(bytes));
                assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(bytes, 1L << 62));
            }
            IrisOutOfMemoryException e =
                    assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(Long.MAX_VALUE));
            assertMessageContains(e, "requested 8.0 EiB (9223372036854775807 bytes)");
            assertEquals(Long.MAX_VALUE, e.requestedBytes());
            assertEquals(0, heap.liveBlocks());
            assertEquals(GiB - 4096, heap.freeBytes());
        }

        @Test
        void heapsNearLongMaxValueStayConsistent() {
            HeapAllocator heap = new HeapAllocator(Long.MAX_VALUE, 0);
            assertEquals(0, heap.allocate(Long.MAX_VALUE - 100));     // extent clipped at the capacity
            assertEquals(Long.MAX_VALUE, heap.usedBytes());
            assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(1));
            heap.free(0);
            long a = heap.allocate(1, 1L << 62);
            assertEquals(0, a);
            long b = heap.allocate(1, 1L << 62);
            assertEquals(1L << 62, b);
            assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(1, 1L << 62));
            assertThrows(IrisOutOfMemoryException.class, () -> heap.allocate(Long.MAX_VALUE - 255));
            assertInvariants(heap);
            heap.free(a);
            heap.free(b);
            assertEquals(List.of(new Block(0, Long.MAX_VALUE)), heap.freeBlocksSnapshot());
        }
    }

    @Nested
    class InvalidFree {
        @Test
        void doubleFreeNamesTheOffset() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            heap.allocate(4096);
            long b = heap.allocate(4096);
            heap.allocate(4096);
            assertEquals(4096, b);
            heap.free(b);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> heap.free(b));
            assertEquals("double free or invalid free of heap offset 4096: no live block starts there", e.getMessage());
            assertEquals(2, heap.liveBlocks(), "a rejected free changes nothing");
            assertEquals(MiB - 8192, heap.freeBytes());
        }

        @Test
        void freeInsideALiveBlockNamesThatBlock() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            heap.allocate(1000);
            long b = heap.allocate(5000);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> heap.free(b + 256));
            assertEquals("double free or invalid free of heap offset 1280: it lies inside the live block at offset "
                    + "1024 (size 5000 bytes); pass the offset that allocate returned", e.getMessage());
            // Inside the rounded-up padding of the block counts too.
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.free(b + 5100)),
                    "inside the live block at offset 1024");
            assertTrue(heap.isLive(b));
        }

        @Test
        void freeOutsideTheHeapOrInThePrefix() {
            HeapAllocator heap = new HeapAllocator(MiB, 4096);
            assertEquals("double free or invalid free of heap offset -1: outside the heap [0, 1048576)",
                    assertThrows(IllegalStateException.class, () -> heap.free(-1)).getMessage());
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.free(MiB)), "outside the heap");
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.free(Long.MAX_VALUE)),
                    "outside the heap");
            assertEquals("double free or invalid free of heap offset 256: inside the reserved prefix [0, 4096), "
                    + "which is never allocated", assertThrows(IllegalStateException.class, () -> heap.free(256)).getMessage());
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.free(8192)),
                    "no live block starts there");
        }

        @Test
        void sizeOfAndIsLive() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long a = heap.allocate(1000);
            assertTrue(heap.isLive(a));
            assertEquals(1000, heap.sizeOf(a));
            assertFalse(heap.isLive(a + 256));
            assertFalse(heap.isLive(-1));
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.sizeOf(a + 256)),
                    "sizeOf of heap offset 256: it lies inside the live block at offset 0");
            heap.free(a);
            assertFalse(heap.isLive(a));
            assertMessageContains(assertThrows(IllegalStateException.class, () -> heap.sizeOf(a)),
                    "no live block starts there");
        }
    }

    @Nested
    class Snapshots {
        @Test
        void liveBlocksAreInOffsetOrderWithRequestedSizesAndImmutable() {
            HeapAllocator heap = new HeapAllocator(MiB, 0);
            long a = heap.allocate(100);
            long b = heap.allocate(2000);
            long c = heap.allocate(300);
            heap.free(a);
            long d = heap.allocate(50);              // reuses a's slot, so it is first in offset order
            assertEquals(a, d);
            List<Block> snapshot = heap.liveBlocksSnapshot();
            assertEquals(List.of(new Block(d, 50), new Block(b, 2000), new Block(c, 300)), snapshot);
            assertThrows(UnsupportedOperationException.class, () -> snapshot.add(new Block(0, 1)));
            heap.free(b);
            assertEquals(3, snapshot.size(), "a snapshot does not follow later changes");
            assertThrows(UnsupportedOperationException.class, () -> heap.freeBlocksSnapshot().clear());
        }

        @Test
        void blockRejectsNonsense() {
            assertThrows(IllegalArgumentException.class, () -> new Block(-1, 10));
            assertThrows(IllegalArgumentException.class, () -> new Block(0, 0));
            assertThrows(IllegalArgumentException.class, () -> new Block(Long.MAX_VALUE, 1));
            assertEquals(Long.MAX_VALUE, new Block(1, Long.MAX_VALUE - 1).end());
        }

        @Test
        void humanUnits() {
            assertEquals("0 B", HeapAllocator.human(0));
            assertEquals("1023 B", HeapAllocator.human(1023));
            assertEquals("1.0 KiB", HeapAllocator.human(1024));
            assertEquals("1.5 KiB", HeapAllocator.human(1536));
            assertEquals("600.0 MiB", HeapAllocator.human(600 * MiB));
            assertEquals("1.0 GiB", HeapAllocator.human(GiB));
            assertEquals("8.0 EiB", HeapAllocator.human(Long.MAX_VALUE));
        }
    }

    @Nested
    class Randomized {
        @Test
        void sameCallsGiveSameOffsetsOnEveryRank() {
            // Each "rank" replays the same seeded sequence; only the allocator is separate.
            List<String> rank0 = replay(new HeapAllocator(64 * MiB, 12345), 42, 10_000);
            List<String> rank1 = replay(new HeapAllocator(64 * MiB, 12345), 42, 10_000);
            assertEquals(10_000, rank0.size());
            assertEquals(rank0, rank1);
            assertTrue(rank0.stream().anyMatch(s -> s.startsWith("oom")), "the sequence should also hit OOM");
            assertTrue(rank0.stream().anyMatch(s -> s.startsWith("free")), "the sequence should also free");
        }

        private List<String> replay(HeapAllocator heap, long seed, int ops) {
            Random random = new Random(seed);
            List<Long> liveOffsets = new ArrayList<>();
            List<String> log = new ArrayList<>(ops);
            for (int i = 0; i < ops; i++) {
                if (!liveOffsets.isEmpty() && random.nextInt(100) < 45) {
                    long offset = liveOffsets.remove(random.nextInt(liveOffsets.size()));
                    heap.free(offset);
                    log.add("free " + offset);
                } else {
                    long bytes = randomSize(random);
                    long alignment = 1L << random.nextInt(22);
                    try {
                        long offset = heap.allocate(bytes, alignment);
                        liveOffsets.add(offset);
                        log.add("alloc " + bytes + " " + alignment + " -> " + offset);
                    } catch (IrisOutOfMemoryException e) {
                        log.add("oom " + e.getMessage());
                    }
                }
            }
            return log;
        }

        @Test
        void invariantsHoldAgainstAReferenceModel() {
            for (long seed = 1; seed <= 5; seed++) {
                long capacity = seed % 2 == 0 ? 32 * MiB : 32 * MiB - 1000;   // also a ragged end
                HeapAllocator heap = new HeapAllocator(capacity, seed * 777);
                runAgainstModel(heap, new Random(seed), 4_000);
            }
        }

        private void runAgainstModel(HeapAllocator heap, Random random, int ops) {
            long reserved = heap.reservedBytes();
            long capacity = heap.capacity();
            TreeMap<Long, Long> model = new TreeMap<>();          // live offset -> requested size
            List<Long> order = new ArrayList<>();
            int ooms = 0;
            for (int i = 0; i < ops; i++) {
                if (!order.isEmpty() && random.nextInt(100) < 40) {
                    long offset = order.remove(random.nextInt(order.size()));
                    heap.free(offset);
                    model.remove(offset);
                } else {
                    long bytes = randomSize(random);
                    long alignment = 1L << random.nextInt(22);
                    List<Block> freeBefore = heap.freeBlocksSnapshot();
                    try {
                        long offset = heap.allocate(bytes, alignment);
                        long effective = Math.max(alignment, UNIT);
                        assertEquals(0, offset % effective, "offset " + offset + " alignment " + alignment);
                        assertTrue(offset >= reserved && offset <= capacity - bytes,
                                "block [" + offset + ", +" + bytes + ") outside [" + reserved + ", " + capacity + ")");
                        Map.Entry<Long, Long> below = model.floorEntry(offset);
                        if (below != null) {
                            assertTrue(below.getKey() + extent(below.getValue(), below.getKey(), capacity) <= offset,
                                    "overlaps the live block below");
                        }
                        Long above = model.ceilingKey(offset);
                        if (above != null) {
                            assertTrue(offset + bytes <= above, "overlaps the live block above");
                        }
                        model.put(offset, bytes);
                        order.add(offset);
                    } catch (IrisOutOfMemoryException e) {
                        ooms++;
                        // The allocator may only refuse when no free block could hold the request.
                        long effective = Math.max(alignment, UNIT);
                        for (Block free : freeBefore) {
                            long start = (free.offset() + effective - 1) / effective * effective;
                            assertTrue(start + bytes > free.end(), "refused although " + free + " fits " + bytes
                                    + " at alignment " + alignment);
                        }
                        assertEquals(bytes, e.requestedBytes());
                        assertEquals(heap.freeBytes(), e.freeBytes());
                        assertEquals(heap.largestFreeBlock(), e.largestFreeBlock());
                    }
                }
                assertEquals(model.size(), heap.liveBlocks());
                if (i % 16 == 0) {
                    assertEquals(modelAsBlocks(model), heap.liveBlocksSnapshot());
                    assertInvariants(heap);
                }
            }
            assertTrue(ooms > 0, "the random sizes should also exercise OOM");
            for (long offset : order) {
                heap.free(offset);
            }
            assertEquals(List.of(new Block(reserved, capacity - reserved)), heap.freeBlocksSnapshot());
            assertEquals(0, heap.usedBytes());
        }

        private List<Block> modelAsBlocks(TreeMap<Long, Long> model) {
            List<Block> blocks = new ArrayList<>();
            model.forEach((offset, size) -> blocks.add(new Block(offset, size)));
            return blocks;
        }
    }

    @Test
    void concurrentCallersKeepTheBookkeepingConsistent() throws Exception {
        HeapAllocator heap = new HeapAllocator(256 * MiB, 4096);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            futures.add(pool.submit(() -> {
                Random random = new Random(seed);
                List<Long> mine = new ArrayList<>();
                go.await();
                for (int i = 0; i < 2_000; i++) {
                    if (!mine.isEmpty() && random.nextBoolean()) {
                        heap.free(mine.remove(random.nextInt(mine.size())));
                    } else {
                        mine.add(heap.allocate(1 + random.nextInt(64 * 1024), 1L << random.nextInt(13)));
                    }
                }
                for (long offset : mine) {
                    heap.free(offset);
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(List.of(new Block(4096, 256 * MiB - 4096)), heap.freeBlocksSnapshot());
        assertEquals(0, heap.liveBlocks());
    }

    /** Mostly small tensors, some large ones, so the heap both fragments and runs out. */
    private static long randomSize(Random random) {
        return switch (random.nextInt(10)) {
            case 0 -> 1 + random.nextInt((int) (4 * MiB));
            case 1, 2 -> 1 + random.nextInt((int) (256 * KiB));
            default -> 1 + random.nextInt(8192);
        };
    }

    /** The extent the allocator should give a live block: rounded up to the unit, clipped at the heap end. */
    private static long extent(long requested, long offset, long capacity) {
        long rounded = requested > Long.MAX_VALUE - (UNIT - 1) ? Long.MAX_VALUE : (requested + UNIT - 1) / UNIT * UNIT;
        return Math.min(rounded, capacity - offset);
    }

    /**
     * Checks what must hold after every call: live extents and free blocks tile
     * [reserved, capacity) exactly, in offset order, with no two free blocks adjacent (so
     * coalescing happened), and the counters agree with that tiling.
     */
    private static void assertInvariants(HeapAllocator heap) {
        long capacity = heap.capacity();
        long reserved = heap.reservedBytes();
        TreeMap<Long, Long> extents = new TreeMap<>();          // offset -> extent, tagged by sign: free < 0
        for (Block live : heap.liveBlocksSnapshot()) {
            assertTrue(live.offset() % UNIT == 0, "live block " + live + " is misaligned");
            assertEquals(live.size(), heap.sizeOf(live.offset()));
            assertTrue(heap.isLive(live.offset()));
            extents.put(live.offset(), extent(live.size(), live.offset(), capacity));
        }
        long freeTotal = 0;
        long largest = 0;
        for (Block free : heap.freeBlocksSnapshot()) {
            assertTrue(free.offset() % UNIT == 0, "free block " + free + " is misaligned");
            assertTrue(free.end() == capacity || free.size() % UNIT == 0, "free block " + free + " is ragged");
            if (extents.put(free.offset(), -free.size()) != null) {
                fail("free block " + free + " starts where a live block starts");
            }
            freeTotal += free.size();
            largest = Math.max(largest, free.size());
        }
        long cursor = reserved;
        boolean previousFree = false;
        long used = 0;
        for (Map.Entry<Long, Long> entry : extents.entrySet()) {
            assertEquals(cursor, (long) entry.getKey(), "gap or overlap at heap offset " + cursor);
            boolean isFree = entry.getValue() < 0;
            assertFalse(isFree && previousFree, "adjacent free blocks at " + entry.getKey() + " were not coalesced");
            long size = Math.abs(entry.getValue());
            if (!isFree) {
                used += size;
            }
            cursor += size;
            previousFree = isFree;
        }
        assertEquals(capacity, cursor, "blocks do not reach the end of the heap");
        assertEquals(freeTotal, heap.freeBytes());
        assertEquals(used, heap.usedBytes());
        assertEquals(capacity - reserved, heap.usedBytes() + heap.freeBytes());
        assertEquals(largest, heap.largestFreeBlock());
        assertEquals(heap.freeBlocksSnapshot().size(), heap.freeBlockCount());
    }

    private static void assertMessageContains(Throwable e, String expected) {
        assertTrue(e.getMessage() != null && e.getMessage().contains(expected),
                "expected message containing \"" + expected + "\" but was \"" + e.getMessage() + "\"");
    }
}

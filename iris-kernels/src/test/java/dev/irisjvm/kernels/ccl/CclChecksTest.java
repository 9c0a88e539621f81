package dev.irisjvm.kernels.ccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.ccl.CclChecks.Operand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every argument check's message, without a GPU: rank, call, argument, what it is, what was expected. */
class CclChecksTest {
    private static Operand t(String name, DType d, long n) {
        return new Operand(name, d, n, true, true, 4096 * n, "SymTensor(" + d + "[" + n + "]@" + 4096 * n + ")");
    }

    private static void rejects(String expected, Executable check) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, check);
        assertEquals(expected, e.getMessage());
    }

    @Test
    void tensorState() {
        Operand freed = new Operand("in", DType.BF16, 10, false, true, 256, "SymTensor(BF16[10]@256, freed)");
        rejects("rank 3: allReduce: in SymTensor(BF16[10]@256, freed) was freed", () -> CclChecks.usable(3, "allReduce", freed));
        Operand foreign = new Operand("out", DType.BF16, 10, true, false, 256, "SymTensor(BF16[10]@256)");
        rejects("rank 0: allGather: out SymTensor(BF16[10]@256) is not on this Iris instance's symmetric heap (collectives work "
                + "on tensors of the heap their Collectives was created from)", () -> CclChecks.usable(0, "allGather", foreign));
        rejects("rank 1: broadcast: tensor must not be null", () -> TensorChecks.notNull(1, "broadcast", "tensor", null));
        CclChecks.usable(0, "allReduce", t("in", DType.F32, 5));  // fine
    }

    @Test
    void dtypes() {
        rejects("rank 1: allReduce: in has dtype I32; expected BF16, F16 or F32",
                () -> CclChecks.reducible(1, "allReduce", t("in", DType.I32, 8)));
        rejects("rank 1: reduceScatter: in has dtype F64; expected BF16, F16 or F32",
                () -> CclChecks.reducible(1, "reduceScatter", t("in", DType.F64, 8)));
        for (DType d : new DType[] {DType.BF16, DType.F16, DType.F32}) CclChecks.reducible(0, "allReduce", t("in", d, 8));
        rejects("rank 0: allReduce: out has dtype F16; expected BF16 (the dtype of in)",
                () -> CclChecks.sameDType(0, "allReduce", t("in", DType.BF16, 8), t("out", DType.F16, 8)));
    }

    @Test
    void sizes() {
        rejects("rank 2: allReduce: out has 999 elements; expected 1000 (the element count of in)",
                () -> CclChecks.numel(2, "allReduce", t("out", DType.BF16, 999), 1000, "the element count of in"));
        rejects("rank 0: reduceScatter: in has 1001 elements, which the world size 2 does not divide",
                () -> CclChecks.divisible(0, "reduceScatter", t("in", DType.BF16, 1001), 2));
        CclChecks.divisible(0, "reduceScatter", t("in", DType.BF16, 1001), 7);  // 7 x 143
    }

    @Test
    void distinctAndRoot() {
        Operand a = t("in", DType.BF16, 8);
        Operand same = new Operand("out", DType.BF16, 8, true, true, a.heapOffset(), a.describe());
        rejects("rank 0: allToAll: in and out are the same tensor " + a.describe() + "; allToAll is out-of-place",
                () -> CclChecks.distinct(0, "allToAll", a, same, "allToAll is out-of-place"));
        CclChecks.distinct(0, "allToAll", a, t("out", DType.BF16, 9), "x");
        // Views of one tensor: the second half of a 16-element tensor and a window across its middle.
        Operand half = new Operand("in", DType.BF16, 8, true, true, 1016, "SymTensor(BF16[8]@1016 (view))");
        Operand middle = new Operand("out", DType.BF16, 8, true, true, 1008, "SymTensor(BF16[8]@1008 (view))");
        rejects("rank 2: allToAll: in SymTensor(BF16[8]@1016 (view)) and out SymTensor(BF16[8]@1008 (view)) overlap; x",
                () -> CclChecks.distinct(2, "allToAll", half, middle, "x"));
        CclChecks.distinct(2, "allToAll", half, new Operand("out", DType.BF16, 4, true, true, 1008, "adjacent"), "x");
        rejects("rank 1: broadcast: root 2 is out of range [0, 2)", () -> CclChecks.root(1, "broadcast", 2, 2));
        rejects("rank 1: broadcast: root -1 is out of range [0, 2)", () -> CclChecks.root(1, "broadcast", -1, 2));
        CclChecks.root(1, "broadcast", 1, 2);
    }

    @Test
    void allGatherInPlaceIsOutsBlockOfThisRank() {
        // out: 24 BF16 elements at heap offset 1000; in: 8 elements. Rank 1's block is bytes [1016, 1032).
        Operand out = new Operand("out", DType.BF16, 24, true, true, 1000, "SymTensor(BF16[24]@1000)");
        assertEquals(true, CclChecks.allGatherMaybeInPlace(1, "allGather", new Operand("in", DType.BF16, 8, true, true, 1016,
                "SymTensor(BF16[8]@1016 (view))"), out, "stream", 3));
        assertEquals(false, CclChecks.allGatherMaybeInPlace(1, "allGather", t("in", DType.BF16, 8), out, "stream", 3));
        rejects("rank 2: allGather: in SymTensor(BF16[8]@1016 (view)) and out SymTensor(BF16[24]@1000) overlap; in must be apart"
                + " from out, or out's block of this rank for an in-place all-gather (bytes [32, 48) of out: out.chunk(2, 3))",
                () -> CclChecks.allGatherMaybeInPlace(2, "allGather", new Operand("in", DType.BF16, 8, true, true, 1016,
                        "SymTensor(BF16[8]@1016 (view))"), out, "stream", 3));
        rejects("rank 0: allGather: out has 24 elements; expected 16 (world size 2 x in's element count)",
                () -> CclChecks.allGatherMaybeInPlace(0, "allGather", new Operand("in", DType.BF16, 8, true, true, 1000, "x"), out,
                        "stream", 2));
        // The world all-gather stays out of place: out's own block is refused there.
        rejects("rank 0: allGather: in x and out SymTensor(BF16[24]@1000) overlap; out of place",
                () -> CclChecks.allGather(0, "allGather", new Operand("in", DType.BF16, 8, true, true, 1000, "x"), out, "stream", 3,
                        "out of place"));
    }

    @Test
    void countsGiveDisplacementsOrSayWhatIsWrong() {
        Operand in = t("in", DType.BF16, 100);
        assertArrayEquals(new long[] {0, 10, 10}, CclChecks.counts(0, "allToAllV", "sendCounts", new long[] {10, 0, 90}, 3, in));
        rejects("rank 0: allToAllV: sendCounts must not be null", () -> CclChecks.counts(0, "allToAllV", "sendCounts", null, 3, in));
        rejects("rank 0: allToAllV: sendCounts has 2 entries; expected 3 (one per rank)",
                () -> CclChecks.counts(0, "allToAllV", "sendCounts", new long[] {1, 2}, 3, in));
        rejects("rank 0: allToAllV: recvCounts[1] is -4; counts must be >= 0",
                () -> CclChecks.counts(0, "allToAllV", "recvCounts", new long[] {1, -4, 2}, 3, t("out", DType.BF16, 100)));
        rejects("rank 0: allToAllV: sendCounts [50, 50, 1] add up to 101 elements; in has only 100",
                () -> CclChecks.counts(0, "allToAllV", "sendCounts", new long[] {50, 50, 1}, 3, in));
        rejects("rank 0: allToAllV: sendCounts [" + Long.MAX_VALUE + ", 1] overflows 64 bits",
                () -> CclChecks.counts(0, "allToAllV", "sendCounts", new long[] {Long.MAX_VALUE, 1}, 2, in));
    }

    @Test
    void oneShotStaging() {
        assertEquals(2 * 16, CclChecks.oneShotStagingBytes(2, 2));
        assertEquals(8 * 4096, CclChecks.oneShotStagingBytes(4096, 8));
        assertEquals(3 * 2000016, CclChecks.oneShotStagingBytes(2000006, 3));
    }

    @Test
    void optionsAreChecked() {
        Collectives.Options d = Collectives.Options.defaults();
        assertEquals(Collectives.Options.DEFAULT_STAGING_BYTES, d.stagingBytes());
        assertEquals(0, d.maxBlocks());
        assertEquals(1 << 20, d.withStagingBytes(1 << 20).stagingBytes());
        assertThrows(IllegalArgumentException.class, () -> d.withStagingBytes(-1));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxBlocks(Collectives.MAX_BLOCKS + 1));
        assertThrows(IllegalArgumentException.class, () -> d.withMaxBlocks(-1));
        assertThrows(IllegalArgumentException.class, () -> d.withBytesPerBlock(0));
        assertThrows(IllegalArgumentException.class, () -> d.withAllToAllVBlocks(0));
        assertEquals(7, d.withMaxBlocks(7).maxBlocks());
        assertEquals(true, d.overlapLaunches());
        assertEquals(false, d.withOverlapLaunches(false).withStagingBytes(1 << 20).overlapLaunches());
    }
}

package dev.irisjvm.kernels.ccl;

import static dev.irisjvm.kernels.TensorChecks.fail;
import static dev.irisjvm.kernels.TensorChecks.notNull;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.TensorChecks;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * Argument checks of {@link Collectives}, done before anything is launched. Each failure is an
 * {@link IllegalArgumentException} whose message starts with the rank and the call and names the
 * argument, what it is and what was expected, e.g. {@code "rank 1: allReduce: out has 999 elements;
 * expected 1000 (the element count of in)"}. Pure functions over {@link Operand}s, so that they are
 * tested without a GPU.
 */
final class CclChecks {
    /** Element types of the reductions. */
    static final Set<DType> REDUCIBLE = EnumSet.of(DType.BF16, DType.F16, DType.F32);

    private CclChecks() {}

    /**
     * What the checks need to know about a tensor argument. {@code tensor} is what a message shows
     * (its toString); it is formatted only when a check fails, so a call that passes builds no
     * strings.
     */
    record Operand(String name, DType dtype, long numel, boolean live, boolean onThisHeap, long heapOffset, Object tensor) {
        String describe() {
            return String.valueOf(tensor);
        }

        long byteSize() {
            return numel * dtype.byteSize();
        }

        boolean sameTensor(Operand other) {
            return heapOffset == other.heapOffset && byteSize() == other.byteSize();
        }

        /** Whether the two share a byte of the heap (views of one tensor can). */
        boolean overlaps(Operand other) {
            return heapOffset < other.heapOffset + other.byteSize() && other.heapOffset < heapOffset + byteSize();
        }
    }

    /** A live tensor of this Iris instance's heap. */
    static void usable(int rank, String call, Operand t) {
        TensorChecks.usable(rank, call, t.name(), t.tensor(), t.live(), t.onThisHeap(),
                " (collectives work on tensors of the heap their Collectives was created from)");
    }

    static void reducible(int rank, String call, Operand t) {
        if (!REDUCIBLE.contains(t.dtype())) {
            throw fail(rank, call, t.name() + " has dtype " + t.dtype() + "; expected BF16, F16 or F32");
        }
    }

    static void sameDType(int rank, String call, Operand in, Operand out) {
        if (in.dtype() != out.dtype()) {
            throw fail(rank, call, out.name() + " has dtype " + out.dtype() + "; expected " + in.dtype() + " (the dtype of "
                    + in.name() + ")");
        }
    }

    static void numel(int rank, String call, Operand t, long expected, String why) {
        if (t.numel() != expected) {
            throw fail(rank, call, t.name() + " has " + t.numel() + " elements; expected " + expected + " (" + why + ")");
        }
    }

    static void divisible(int rank, String call, Operand t, int world) {
        if (t.numel() % world != 0) {
            throw fail(rank, call, t.name() + " has " + t.numel() + " elements, which the world size " + world
                    + " does not divide");
        }
    }

    static void distinct(int rank, String call, Operand in, Operand out, String why) {
        if (in.sameTensor(out)) {
            throw fail(rank, call, in.name() + " and " + out.name() + " are the same tensor " + in.describe() + "; " + why);
        }
        if (in.overlaps(out)) {
            throw fail(rank, call, in.name() + " " + in.describe() + " and " + out.name() + " " + out.describe() + " overlap; " + why);
        }
    }

    /** The arguments every reduction checks: an op and a stream, a reducible dtype, the same in {@code out}. */
    static void reduction(int rank, String call, Operand in, Operand out, Object op, Object stream) {
        notNull(rank, call, "op", op);
        notNull(rank, call, "stream", stream);
        reducible(rank, call, in);
        sameDType(rank, call, in, out);
    }

    /** A reduce-scatter over {@code world} ranks: a reduction whose {@code in} splits into world shards of {@code out}'s size. */
    static void reduceScatter(int rank, String call, Operand in, Operand out, Object op, Object stream, int world, String outOfPlace) {
        reduction(rank, call, in, out, op, stream);
        divisible(rank, call, in, world);
        numel(rank, call, out, in.numel() / world, "in's element count / world size " + world);
        distinct(rank, call, in, out, outOfPlace);
    }

    /** An all-gather over {@code world} ranks: {@code out} of {@code in}'s dtype holds world copies of its size. */
    static void allGather(int rank, String call, Operand in, Operand out, Object stream, int world, String outOfPlace) {
        gatherShape(rank, call, in, out, stream, world);
        distinct(rank, call, in, out, outOfPlace);
    }

    /**
     * An all-gather that may run in place: {@code in} either apart from {@code out} or exactly out's
     * block of this rank (elements [rank n, (rank+1) n), n being in's element count: NCCL's in-place
     * convention). Returns whether it runs in place.
     */
    static boolean allGatherMaybeInPlace(int rank, String call, Operand in, Operand out, Object stream, int world) {
        gatherShape(rank, call, in, out, stream, world);
        boolean inPlace = in.heapOffset() == out.heapOffset() + rank * in.byteSize();
        if (!inPlace) {
            distinct(rank, call, in, out, "in must be apart from out, or out's block of this rank for an in-place all-gather"
                    + " (bytes [" + rank * in.byteSize() + ", " + (rank + 1) * in.byteSize() + ") of out: out.chunk(" + rank + ", "
                    + world + "))");
        }
        return inPlace;
    }

    private static void gatherShape(int rank, String call, Operand in, Operand out, Object stream, int world) {
        notNull(rank, call, "stream", stream);
        sameDType(rank, call, in, out);
        numel(rank, call, out, in.numel() * world, "world size " + world + " x in's element count");
    }

    /** An all-to-all-v: a stream, and distinct tensors of one dtype (the counts are checked against them apart). */
    static void allToAllV(int rank, String call, Operand in, Operand out, Object stream, String outOfPlace) {
        notNull(rank, call, "stream", stream);
        sameDType(rank, call, in, out);
        distinct(rank, call, in, out, outOfPlace);
    }

    static void root(int rank, String call, int root, int world) {
        if (root < 0 || root >= world) {
            throw fail(rank, call, "root " + root + " is out of range [0, " + world + ")");
        }
    }

    /**
     * Per-peer counts of all-to-all-v: one non-negative count per rank whose sum fits the tensor.
     * Returns the displacements (exclusive prefix sums).
     */
    static long[] counts(int rank, String call, String name, long[] counts, int world, Operand t) {
        notNull(rank, call, name, counts);
        if (counts.length != world) {
            throw fail(rank, call, name + " has " + counts.length + " entries; expected " + world + " (one per rank)");
        }
        long[] displs = new long[world];
        long sum = 0;
        for (int p = 0; p < world; p++) {
            if (counts[p] < 0) {
                throw fail(rank, call, name + "[" + p + "] is " + counts[p] + "; counts must be >= 0");
            }
            displs[p] = sum;
            try {
                sum = Math.addExact(sum, counts[p]);
            } catch (ArithmeticException e) {
                throw fail(rank, call, name + " " + Arrays.toString(counts) + " overflows 64 bits");
            }
        }
        if (sum > t.numel()) {
            throw fail(rank, call, name + " " + Arrays.toString(counts) + " add up to " + sum + " elements; " + t.name()
                    + " has only " + t.numel());
        }
        return displs;
    }

    /**
     * The staging need of world slots of that many bytes, each 16-byte aligned: ONE_SHOT's for an
     * input of that size, PUSH reduce-scatter's for a shard of it.
     */
    static long oneShotStagingBytes(long bytes, int world) {
        return world * Partition.alignUp(bytes, 16);
    }
}

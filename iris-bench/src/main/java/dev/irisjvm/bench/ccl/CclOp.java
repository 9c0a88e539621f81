package dev.irisjvm.bench.ccl;

import dev.irisjvm.bench.OpNames;
import java.util.List;

/**
 * The collectives the sweep measures, by the names {@code --ops} takes and
 * {@link dev.irisjvm.bench.results.Measurement#op()} records.
 *
 * <pre>{@code
 * List<CclOp> ops = CclOp.parseList("all_reduce,all_gather");
 * CclOp.ALL_GATHER.shape(4096, 2, 3);   // 3 ranks, bf16: 682 elements in, 2046 out, 4092 bytes
 * }</pre>
 */
public enum CclOp {
    ALL_REDUCE(true),
    ALL_GATHER(false),
    REDUCE_SCATTER(true),
    ALL_TO_ALL(false),
    BROADCAST(false);

    private final boolean reduction;

    CclOp(boolean reduction) {
        this.reduction = reduction;
    }

    /** all_reduce, all_gather, ... */
    public String id() {
        return OpNames.id(this);
    }

    /** Whether the op combines values (then the output check allows for rounding); else it moves bytes. */
    public boolean reduction() {
        return reduction;
    }

    /**
     * The element counts of one point of {@code bytes} nominal bytes, nccl-tests style: the size is
     * the per-rank buffer nccl-tests sizes the op by (all-gather: the output, reduce-scatter: the
     * input), rounded down to whole elements and, where the op splits the buffer by rank, to a
     * multiple of the world size. Null when no element is left.
     */
    public Shape shape(long bytes, int elementBytes, int world) {
        long elements = bytes / elementBytes;
        return switch (this) {
            case ALL_REDUCE, BROADCAST -> elements < 1 ? null : new Shape(elements, elements, elements * elementBytes);
            case ALL_GATHER -> {
                long n = elements / world;
                yield n < 1 ? null : new Shape(n, n * world, n * world * elementBytes);
            }
            case REDUCE_SCATTER -> {
                long n = elements / world;
                yield n < 1 ? null : new Shape(n * world, n, n * world * elementBytes);
            }
            case ALL_TO_ALL -> {
                long n = elements / world;
                yield n < 1 ? null : new Shape(n * world, n * world, n * world * elementBytes);
            }
        };
    }

    /**
     * One point's tensors.
     *
     * @param inCount  elements of the input (broadcast: of the buffer)
     * @param outCount elements of the output, and of the reference it is checked against
     * @param bytes    the size the measurement records (algorithm bandwidth = bytes ÷ time)
     */
    public record Shape(long inCount, long outCount, long bytes) {}

    /** The op of that name ({@code all_load} or {@code ALL_LOAD}). */
    public static CclOp parse(String name) {
        return OpNames.parse(CclOp.class, name);
    }

    /** A comma-separated list, in the order given, without repeats; "all" is every op. */
    public static List<CclOp> parseList(String text) {
        return OpNames.parseList(CclOp.class, text);
    }
}

package dev.irisjvm.kernels.ccl;

/**
 * How {@link Collectives#allReduce} moves data. Every algorithm is stream-ordered, takes no host
 * synchronization and can be captured in a CUDA graph; all ranks must pass the same algorithm (or
 * AUTO, which resolves the same way everywhere).
 *
 * <table>
 * <caption>Algorithms</caption>
 * <tr><th>algorithm</th><th>data movement</th><th>in place</th><th>rounding</th><th>size limit</th></tr>
 * <tr><td>ONE_SHOT</td><td>push: each rank writes its input into every peer's staging buffer,
 *     then reduces all W operands locally</td><td>yes</td><td>once, rank order</td>
 *     <td>W x bytes of staging ({@link Collectives#oneShotCapacityBytes()})</td></tr>
 * <tr><td>TWO_SHOT</td><td>pull reduce-scatter of shard r by rank r, then push of the result into
 *     every rank's output</td><td>yes</td><td>once, rank order</td><td>none</td></tr>
 * <tr><td>RING</td><td>W-1 pull steps of reduce-scatter around the ring, then W-1 of all-gather</td>
 *     <td>yes</td><td>at every step</td><td>none</td></tr>
 * <tr><td>ATOMIC</td><td>each rank copies its input to its output, then reduces its input into
 *     every peer's output with system-scope atomics (red.v4)</td><td>no</td>
 *     <td>at every addition, in arrival order</td><td>none</td></tr>
 * <tr><td>COPY_ENGINE</td><td>TWO_SHOT's data movement on the copy engines, chunk by chunk: pull of
 *     shard r from every peer into staging, local reduction, push of the result into every peer
 *     ({@link CopyEngineCollectives}); opens and closes with a device barrier. Not yet timed on two
 *     GPUs, so AUTO does not pick it by default</td><td>yes</td>
 *     <td>once, rank order</td><td>none; needs staging of at least 16 x W bytes</td></tr>
 * </table>
 *
 * <p>ONE_SHOT, TWO_SHOT and COPY_ENGINE give bit-identical results on every rank (the same float
 * accumulation in rank order); so does RING (every rank copies the same final chunks). ATOMIC's result depends on
 * the order the additions arrive in, so with more than two ranks the ranks' results may differ in
 * the last bits for SUM and AVG.
 */
public enum AllReduceAlgorithm {
    /** {@link #choose} by size and world size, from the measurements in docs/benchmarks/collectives.md. */
    AUTO(null, true),
    ONE_SHOT("one_shot", true),
    TWO_SHOT("two_shot", true),
    RING("ring", true),
    ATOMIC("atomic", false),
    COPY_ENGINE("copy_engine", true);

    /**
     * AUTO picks ONE_SHOT up to this many bytes for world sizes up to 4: on 2 x H200 it was the
     * fastest algorithm, eager and replayed, up to 1 MiB, and TWO_SHOT from 4 MiB on.
     */
    public static final long ONE_SHOT_LIMIT_SMALL_WORLD = 1L << 20;
    /**
     * ... and up to this many bytes for larger worlds, where one-shot moves W-1 copies per rank
     * (not measured yet: no machine with more than two GPUs was available).
     */
    public static final long ONE_SHOT_LIMIT_LARGE_WORLD = 256L << 10;

    private final String kernelName;
    private final boolean inPlace;

    AllReduceAlgorithm(String kernelName, boolean inPlace) {
        this.kernelName = kernelName;
        this.inPlace = inPlace;
    }

    /** The algorithm part of the kernel names ({@code ccl_all_reduce_<this>_<type>_<op>}); null for AUTO. */
    public String kernelName() {
        return kernelName;
    }

    /** Whether {@code in} and {@code out} may be the same tensor. */
    public boolean allowsInPlace() {
        return inPlace;
    }

    /**
     * The rule AUTO follows: ONE_SHOT for messages up to {@link #ONE_SHOT_LIMIT_SMALL_WORLD}
     * (worlds of up to 4 ranks) or {@link #ONE_SHOT_LIMIT_LARGE_WORLD} (larger worlds) when the
     * staging buffers hold them; else COPY_ENGINE once a rank's shard (bytes / world, what it sends
     * each peer) reaches {@code copyEngineBytes}; TWO_SHOT between. On 2 x H200
     * (docs/benchmarks/collectives.md, "Automatic choice") one-shot won up to 1 MiB and two-shot from
     * 4 MiB; RING and ATOMIC were never the fastest at any size, so they are never chosen.
     * COPY_ENGINE has not been timed on two GPUs yet, so by default it is not chosen either.
     *
     * @param bytes             bytes of one rank's input
     * @param world             number of ranks
     * @param oneShotCapacity   the largest input ONE_SHOT can take ({@link Collectives#oneShotCapacityBytes(int, long)})
     * @param copyEngineBytes   the shard size from which COPY_ENGINE is picked ({@link Collectives.Options#copyEngineBytes()};
     *                          {@link Collectives.Options#NEVER}, the default: never)
     */
    public static AllReduceAlgorithm choose(long bytes, int world, long oneShotCapacity, long copyEngineBytes) {
        long limit = world <= 4 ? ONE_SHOT_LIMIT_SMALL_WORLD : ONE_SHOT_LIMIT_LARGE_WORLD;
        if (bytes <= limit && bytes <= oneShotCapacity) {
            return ONE_SHOT;
        }
        return world > 1 && Partition.ceilDiv(bytes, world) >= copyEngineBytes ? COPY_ENGINE : TWO_SHOT;
    }
}

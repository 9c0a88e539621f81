package dev.irisjvm.bench.rma;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.SeedOption;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link RmaSweep}. Sizes take binary suffixes (4096, 64k, 1m, 1g).
 *
 * <pre>{@code
 * SweepOptions o = new SweepOptions();
 * new CommandLine(o).parseArgs("--max-bytes", "64m", "--ops", "load,store");
 * o.sizes();   // 4 KiB, 16 KiB, ..., 64 MiB
 * }</pre>
 */
public final class SweepOptions {
    /** Bytes of heap headroom beyond the largest buffers (flags, counters, allocator rounding). */
    static final long HEAP_HEADROOM = 64L << 20;

    @Option(names = "--min-bytes", converter = SizeConverter.class, defaultValue = "4096",
            description = "Smallest payload of the bandwidth, atomic and NCCL points (default: ${DEFAULT-VALUE}).")
    long minBytes;

    @Option(names = "--max-bytes", converter = SizeConverter.class, defaultValue = "1g",
            description = "Largest payload (default: 1 GiB).")
    long maxBytes;

    @Mixin
    SizeSweepOptions sweep = new SizeSweepOptions();

    @Option(names = "--warmup", defaultValue = "3", description = "Untimed repetitions before the timed ones (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "20", description = "Timed repetitions per point (default: ${DEFAULT-VALUE}).")
    int reps;

    @Mixin
    LargeSizeReps large = new LargeSizeReps();

    @Option(names = "--ops", defaultValue = "all", description = "Comma-separated ops, or all (default). Known: "
            + "load, store, all_load, all_store, store_tiles, atomic_add, atomic_add_f32, atomic_xchg, atomic_cas, message_passing, "
            + "ping_pong, copy_engine, local_copy, send_recv, all_reduce.")
    String ops;

    @Option(names = "--check-only", description = "Every point once, without warm-up or gate, for its check alone: allowed "
            + "where ranks share a GPU; nothing is timed or written, the checks are printed.")
    boolean checkOnly;

    @Mixin
    ResultFileOption out = new ResultFileOption("rma-sweep.json");

    @Option(names = "--heap", defaultValue = "auto",
            description = "Symmetric heap per rank: a size, or auto = (world + 1) x max-bytes + 64 MiB (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--blocks", defaultValue = "0", description = "Blocks of the copy kernels; 0 derives them from the size and the SM count.")
    int blocks;

    @Option(names = "--threads", defaultValue = "512", description = "Threads per block of the copy kernels (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--tile-rows", defaultValue = "128", description = "Rows of a store_tiles tile (default: ${DEFAULT-VALUE}).")
    int tileRows;

    @Option(names = "--tile-cols", defaultValue = "256", description = "Columns (2-byte elements) of a store_tiles tile (default: ${DEFAULT-VALUE}).")
    int tileCols;

    @Option(names = "--tile-ld", defaultValue = "8192",
            description = "Row length (2-byte elements) of the store_tiles matrix; rows = size / (2 x ld) (default: ${DEFAULT-VALUE}).")
    int tileLd;

    @Option(names = "--tile-blocks", defaultValue = "0", description = "Persistent blocks of store_tiles; 0 = one per SM.")
    int tileBlocks;

    @Option(names = "--tile-threads", defaultValue = "256", description = "Threads per store_tiles block (default: ${DEFAULT-VALUE}).")
    int tileThreads;

    @Option(names = "--atomic-blocks", defaultValue = "0", description = "Blocks of rma_atomic; 0 derives them from the op count.")
    int atomicBlocks;

    @Option(names = "--atomic-threads", defaultValue = "512", description = "Threads per block of rma_atomic (default: ${DEFAULT-VALUE}).")
    int atomicThreads;

    @Option(names = "--mp-min-bytes", converter = SizeConverter.class, defaultValue = "8",
            description = "Smallest message of message_passing (default: ${DEFAULT-VALUE}).")
    long mpMinBytes;

    @Option(names = "--mp-max-bytes", converter = SizeConverter.class, defaultValue = "1m",
            description = "Largest message of message_passing (default: 1 MiB).")
    long mpMaxBytes;

    @Option(names = "--mp-iterations", defaultValue = "0",
            description = "Messages per launch; 0 = 64 MiB / size, clamped to [50, 1000].")
    int mpIterations;

    @Option(names = "--mp-blocks", defaultValue = "0", description = "Channels (blocks) of message passing; 0 = one per 64 KiB, at most one per SM.")
    int mpBlocks;

    @Option(names = "--mp-threads", defaultValue = "0", description = "Threads per channel; 0 = as many as the message has 16-byte words, 32 to 512.")
    int mpThreads;

    @Option(names = "--pp-rounds", defaultValue = "2000", description = "Round trips per ping_pong launch (default: ${DEFAULT-VALUE}).")
    int ppRounds;

    @Mixin
    SeedOption seed = new SeedOption();

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        require(minBytes >= 8, "--min-bytes must be at least 8, got " + minBytes);
        require(maxBytes >= minBytes, "--max-bytes " + maxBytes + " is below --min-bytes " + minBytes);
        sweep.validate();
        atLeast("--warmup", warmup, 0);
        atLeast("--reps", reps, 1);
        large.validate();
        require(blocks >= 0 && atomicBlocks >= 0 && mpBlocks >= 0, "--blocks, --atomic-blocks and --mp-blocks must be >= 0");
        requireThreads(threads, "--threads", false);
        requireThreads(atomicThreads, "--atomic-threads", false);
        requireThreads(tileThreads, "--tile-threads", false);
        require(tileRows >= 1 && tileCols >= 8 && tileCols % 8 == 0 && tileLd >= tileCols && tileLd % tileCols == 0
                && tileBlocks >= 0, "--tile-rows must be >= 1, --tile-cols a multiple of 8, --tile-ld a multiple of --tile-cols, "
                + "--tile-blocks >= 0; got " + tileRows + ", " + tileCols + ", " + tileLd + ", " + tileBlocks);
        requireThreads(mpThreads, "--mp-threads", true);
        require(mpMinBytes >= 1 && mpMaxBytes >= mpMinBytes, "--mp-min-bytes must be >= 1 and <= --mp-max-bytes, got "
                + mpMinBytes + " and " + mpMaxBytes);
        atLeast("--mp-iterations", mpIterations, 0);
        atLeast("--pp-rounds", ppRounds, 1);
        ops();
        OptionChecks.heap(heap);
    }

    private static void requireThreads(int t, String name, boolean zeroAllowed) {
        require((zeroAllowed && t == 0) || (t >= 32 && t <= 1024 && t % 32 == 0),
                name + " must be a multiple of 32 in [32, 1024]" + (zeroAllowed ? " or 0" : "") + ", got " + t);
    }

    public List<RmaOp> ops() {
        return RmaOp.parseList(ops);
    }

    /** Sizes of the bandwidth, atomic and NCCL points. */
    public List<Long> sizes() {
        return sweep.sizes(minBytes, maxBytes);
    }

    /** Message sizes of message_passing. */
    public List<Long> messageSizes() {
        return sweep.sizes(mpMinBytes, mpMaxBytes);
    }

    /** Timed repetitions for a payload (one with --check-only). */
    public int repsFor(long bytes) {
        return checkOnly ? 1 : large.repsFor(bytes, reps);
    }

    /** Messages per message_passing launch for a message size. */
    public long messageIterations(long bytes) {
        if (mpIterations > 0) {
            return mpIterations;
        }
        return Math.max(50, Math.min(1000, (64L << 20) / Math.max(1, bytes)));
    }

    /** Heap bytes per rank for a world: --heap, or room for the largest all-peer point. */
    public long heapBytes(int world) {
        long slot = (Math.max(maxBytes, mpMaxBytes) + 15) / 16 * 16;
        return OptionChecks.heapBytes(heap, () -> Math.addExact(Math.multiplyExact(slot, (long) world + 1), HEAP_HEADROOM));
    }

    public int warmup() {
        return checkOnly ? 0 : warmup;
    }

    public boolean checkOnly() {
        return checkOnly;
    }

    /**
     * Whether the stream is held while the reps are queued. Never with --check-only: nothing is
     * timed, and a held stream would block a baseline whose first call synchronizes the device
     * (NCCL connecting its peers) on ranks that share the GPU.
     */
    public boolean gate() {
        return !checkOnly && sweep.gate();
    }
}

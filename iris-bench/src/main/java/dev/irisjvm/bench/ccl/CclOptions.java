package dev.irisjvm.bench.ccl;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OpNames;
import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.SeedOption;
import dev.irisjvm.bench.rma.LargeSizeReps;
import dev.irisjvm.bench.rma.SizeConverter;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.SizeSweepOptions;
import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.AllReduceAlgorithm;
import dev.irisjvm.kernels.ccl.Collectives;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link CclSweep}. Sizes take binary suffixes (4096, 64k, 1m, 1g).
 *
 * <pre>{@code
 * CclOptions o = new CclOptions();
 * new CommandLine(o).parseArgs("--max-bytes", "64m", "--ops", "all_reduce", "--algorithms", "one_shot,auto");
 * o.validate();
 * o.sizes();        // 1 KiB, 4 KiB, ..., 64 MiB
 * o.heapBytes();    // 3 x 64 MiB + the collectives' workspace + headroom
 * }</pre>
 */
public final class CclOptions {
    /** Bytes of heap headroom beyond the point's buffers and the workspace (verifier, allocator rounding). */
    static final long HEAP_HEADROOM = 64L << 20;
    /** Tensors of one point at most: input, output and the reference output (each at most --max-bytes). */
    static final int BUFFERS_PER_POINT = 3;
    /** What --algorithms all stands for, in the order they are timed. */
    static final List<AllReduceAlgorithm> ALL_ALGORITHMS = List.of(AllReduceAlgorithm.ONE_SHOT, AllReduceAlgorithm.TWO_SHOT,
            AllReduceAlgorithm.RING, AllReduceAlgorithm.ATOMIC, AllReduceAlgorithm.COPY_ENGINE, AllReduceAlgorithm.AUTO);
    private static final String KNOWN_ALGORITHMS = "known: one_shot, two_shot, ring, atomic, copy_engine, auto";

    @Option(names = "--min-bytes", converter = SizeConverter.class, defaultValue = "1k",
            description = "Smallest size (per-rank buffer bytes as nccl-tests count them; default: 1 KiB).")
    long minBytes;

    @Option(names = "--max-bytes", converter = SizeConverter.class, defaultValue = "1g", description = "Largest size (default: 1 GiB).")
    long maxBytes;

    @Mixin
    SizeSweepOptions sweep = new SizeSweepOptions();

    @Option(names = "--warmup", defaultValue = "3",
            description = "Untimed eager repetitions before the timed ones (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "20",
            description = "Timed repetitions per point: eager batches of --eager-calls calls, or graph replays (default: ${DEFAULT-VALUE}).")
    int reps;

    @Mixin
    LargeSizeReps large = new LargeSizeReps();

    @Option(names = "--eager-calls", defaultValue = "10",
            description = "Calls launched back to back in one timed eager repetition, as nccl-tests times them; time per call = "
                    + "repetition time / this. 1: one call right after the ranks' device meeting, whose exit skew (one NVLink "
                    + "trip) a one-trip algorithm waits out in full and a pipelined one hides (default: ${DEFAULT-VALUE}).")
    int eagerCalls;

    @Option(names = "--graph-calls", defaultValue = "10",
            description = "Calls captured back to back into one CUDA graph; time per call = replay time / this (default: ${DEFAULT-VALUE}).")
    int graphCalls;

    @Option(names = "--one-call-max-bytes", converter = SizeConverter.class, defaultValue = "256k",
            description = "Sizes up to this are also timed as one call from Java to its completion (the call, or the replay of a "
                    + "one-call graph, then a stream synchronize, between two System.nanoTime()), as a training step that waits for "
                    + "its collective sees it; variants end in _call. 0: none (default: 256 KiB).")
    long oneCallMaxBytes;

    @Option(names = "--graph-warmup", defaultValue = "2", description = "Untimed graph replays before the timed ones (default: ${DEFAULT-VALUE}).")
    int graphWarmup;

    @Option(names = "--no-graph", description = "Skip the graph-replay variants (*_graph).")
    boolean noGraph;

    @Option(names = "--dtype", defaultValue = "bf16", converter = DTypeConverter.class,
            description = "Element type: bf16, f16 or f32 (default: ${DEFAULT-VALUE}).")
    DType dtype;

    @Option(names = "--reduce-op", defaultValue = "sum", converter = ReduceOpConverter.class,
            description = "Reduction of all_reduce and reduce_scatter: sum, max, min, avg (default: ${DEFAULT-VALUE}).")
    ReduceOp reduceOp;

    @Option(names = "--ops", defaultValue = "all",
            description = "Comma-separated ops, or all (default). Known: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast.")
    String ops;

    @Option(names = "--algorithms", defaultValue = "all",
            description = "All-reduce algorithms, or all (default). Known: one_shot, two_shot, ring, atomic, copy_engine, auto.")
    String algorithms;

    @Option(names = "--root", defaultValue = "0", description = "Root rank of broadcast (default: ${DEFAULT-VALUE}).")
    int root;

    @Mixin
    ResultFileOption out = new ResultFileOption("ccl-sweep.json");

    @Option(names = "--heap", defaultValue = "auto",
            description = "Symmetric heap per rank: a size, or auto = 3 x max-bytes + the collectives' workspace + 64 MiB (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--staging-bytes", converter = SizeConverter.class, defaultValue = "16m",
            description = "Collectives.Options.stagingBytes (ONE_SHOT takes inputs up to staging / world; AUTO depends on it; default: 16 MiB, the library's default).")
    long stagingBytes;

    @Option(names = "--copy-engine-bytes", converter = CopyEngineBytesConverter.class, defaultValue = "never",
            description = "Collectives.Options.copyEngineBytes: from this many bytes per peer AUTO all-reduce picks copy_engine and "
                    + "all-gather and all-to-all copy with the copy engines; a size, or never (default: ${DEFAULT-VALUE}, the library's).")
    long copyEngineBytes;

    @Mixin
    SeedOption seed = new SeedOption();

    @Option(names = "--no-nccl", description = "Leave NCCL out: no nccl variants; outputs are checked against a reference computed on the host.")
    boolean noNccl;

    @Option(names = "--no-overlap-launches",
            description = "Turn Collectives.Options.overlapLaunches off (on by default: each iris kernel is scheduled while the one "
                    + "ahead of it still runs).")
    boolean noOverlapLaunches;

    /** picocli converter: a size, or never (Collectives.Options.NEVER). */
    public static final class CopyEngineBytesConverter implements picocli.CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return value.trim().equalsIgnoreCase("never") ? Collectives.Options.NEVER : SizeList.parse(value);
        }
    }

    /** picocli converter: bf16, f16 (fp16, half), f32 (fp32, float). */
    public static final class DTypeConverter implements picocli.CommandLine.ITypeConverter<DType> {
        @Override
        public DType convert(String value) {
            DType t = OptionChecks.dtype(value);
            require(t != null, "unsupported dtype '" + value + "'; use bf16, f16 or f32");
            return t;
        }
    }

    /** picocli converter: sum, max, min, avg, any case. */
    public static final class ReduceOpConverter implements picocli.CommandLine.ITypeConverter<ReduceOp> {
        @Override
        public ReduceOp convert(String value) {
            try {
                return ReduceOp.valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown reduce op '" + value + "'; known: sum, max, min, avg");
            }
        }
    }

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        require(minBytes >= 1, "--min-bytes must be at least 1, got " + minBytes);
        require(maxBytes >= minBytes, "--max-bytes " + maxBytes + " is below --min-bytes " + minBytes);
        sweep.validate();
        require(warmup >= 1, "--warmup must be >= 1 (the first call of a size sets NCCL up; it must not be timed or captured), got " + warmup);
        atLeast("--reps", reps, 1);
        large.validate();
        atLeast("--eager-calls", eagerCalls, 1);
        atLeast("--graph-calls", graphCalls, 1);
        atLeast("--one-call-max-bytes", oneCallMaxBytes, 0);
        atLeast("--graph-warmup", graphWarmup, 0);
        atLeast("--root", root, 0);
        atLeast("--staging-bytes", stagingBytes, 0);
        atLeast("--copy-engine-bytes", copyEngineBytes, 1);
        ops();
        algorithms();
        OptionChecks.heap(heap);
    }

    /** The checks that need the world size. */
    public void validateFor(int world) {
        require(root < world, "--root " + root + " is not a rank of this job of " + world);
    }

    public List<CclOp> ops() {
        return CclOp.parseList(ops);
    }

    /** The all-reduce algorithms to time, in the order given (AUTO included when asked for). */
    public List<AllReduceAlgorithm> algorithms() {
        return OpNames.parseList(algorithms, ALL_ALGORITHMS, CclOptions::algorithm,
                "--algorithms needs at least one algorithm; " + KNOWN_ALGORITHMS);
    }

    private static AllReduceAlgorithm algorithm(String name) {
        try {
            return AllReduceAlgorithm.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown all-reduce algorithm '" + name.trim() + "'; " + KNOWN_ALGORITHMS);
        }
    }

    /** The impl name a measurement of this algorithm records: iris_one_shot, ..., iris_auto. */
    public static String implName(AllReduceAlgorithm a) {
        return "iris_" + a.name().toLowerCase(Locale.ROOT);
    }

    public List<Long> sizes() {
        return sweep.sizes(minBytes, maxBytes);
    }

    /** Timed repetitions for a size. */
    public int repsFor(long bytes) {
        return large.repsFor(bytes, reps);
    }

    /** The options of the Collectives instance the sweep measures. */
    public Collectives.Options collectivesOptions() {
        return Collectives.Options.defaults().withStagingBytes(stagingBytes).withOverlapLaunches(!noOverlapLaunches)
                .withCopyEngineBytes(copyEngineBytes);
    }

    /** Heap bytes per rank: --heap, or room for one point's three buffers plus the workspace. */
    public long heapBytes() {
        long slot = (maxBytes + 255) / 256 * 256;
        return OptionChecks.heapBytes(heap, () -> Math.addExact(Math.addExact(Math.multiplyExact(slot, BUFFERS_PER_POINT),
                Collectives.workspaceBytes(stagingBytes)), HEAP_HEADROOM));
    }

    public boolean graph() {
        return !noGraph;
    }

    public boolean nccl() {
        return !noNccl;
    }
}

package dev.irisjvm.bench.fused;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.JobOptions;
import dev.irisjvm.bench.OpNames;
import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.SeedOption;
import dev.irisjvm.kernels.fused.FusedOp;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link FusedSweep}.
 *
 * <pre>{@code
 * FusedOptions o = new FusedOptions();
 * new CommandLine(o).parseArgs("--ops", "all_reduce", "--shapes", "all_reduce:4096x4096x4096", "--reps", "50");
 * o.validate();
 * o.shapes();       // [all_reduce 4096x4096x4096]
 * }</pre>
 */
public final class FusedOptions {
    /**
     * Issue 9's shapes (global M x N x K, TP = world size), two per operation, in the order the
     * report shows them.
     */
    public static final String DEFAULT_SHAPES = "all_scatter:8192x8192x8192,all_scatter:8192x4608x36864,"
            + "all_reduce:8192x8192x8192,all_reduce:4096x4096x4096,"
            + "all_gather:8192x8192x8192,all_gather:1024x3584x8192,"
            + "reduce_scatter:8192x8192x8192,reduce_scatter:8192x4096x12288";
    /** --quick: one mid-sized shape per operation, for a smoke run. */
    public static final String QUICK_SHAPES = "all_scatter:4096x4096x4096,all_reduce:4096x4096x4096,"
            + "all_gather:4096x4096x4096,reduce_scatter:4096x4096x4096";
    /** The rows of issue 26's small-M table. */
    public static final List<Integer> SMALL_MS = List.of(1, 8, 32, 64, 128, 256);
    /**
     * --small-m: issue 26's small-M table, M = 1, 8, 32, 64, 128 and 256 at the MLP shapes of Llama-3
     * 70B and 8B (global, TP = world size): the row-parallel down projection (hidden x intermediate:
     * 8192 x 28672, 4096 x 14336) for GEMM + all-reduce and GEMM + reduce-scatter, the
     * column-parallel up projection (14336 x 4096, 28672 x 8192) for all-gather + GEMM. The shapes
     * whose rows the ranks cannot split (M not a multiple of the ranks) are recorded as not run, with
     * why; where the rows are not whole 128-row tiles per rank, the fused kernels' variants record
     * why they did not run, and UNFUSED runs it.
     */
    public static final String SMALL_M_SHAPES = smallM();
    /** Fewest timed repetitions a point may have. */
    public static final int MIN_REPS = 20;

    @Mixin
    ResultFileOption out = new ResultFileOption("fused-sweep.json");

    @Option(names = "--traces", description = "Folder for the Chrome traces (default: the result JSON's folder).")
    Path traces;

    @Option(names = "--shapes", defaultValue = DEFAULT_SHAPES,
            description = "Comma-separated op:MxNxK, op one of all_scatter, all_reduce, reduce_scatter, all_gather "
                    + "(default: issue 9's eight: ${DEFAULT-VALUE}).")
    String shapes;

    @Option(names = "--quick", description = "One 4096^3 shape per operation instead of --shapes, for a smoke run.")
    boolean quick;

    @Option(names = "--small-m", description = "Issue 26's small-M shapes instead of --shapes (M = 1 to 256 at Llama-3's MLP "
            + "shapes), each also against cuBLAS then the library's own collective.")
    boolean smallM;

    @Option(names = "--check-only", description = "Every point once, without warm-up or timing, for its output check alone: "
            + "allowed where ranks share a GPU; no JSON is written and no trace taken, the checks are printed.")
    boolean checkOnly;

    @Option(names = "--warmup", defaultValue = "5", description = "Untimed calls per implementation and shape (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "30",
            description = "Timed calls per implementation and shape, at least " + MIN_REPS + " (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--group-m", defaultValue = "8", description = "FusedConfig.groupM of every fused instance (default: ${DEFAULT-VALUE}).")
    int groupM;

    @Option(names = "--tile-n", defaultValue = "0",
            description = "FusedConfig.tileN of every fused instance: 0 for the width each shape gets (default), else one the "
                    + "operations' kernels come in (FusedOp.tileWidths).")
    int tileN;

    @Option(names = "--split-k", defaultValue = "0",
            description = "FusedConfig.splitK of every fused instance: 0 for the split each shape gets (default), 1 or 2 "
                    + "(all-gather + GEMM only).")
    int splitK;

    @Option(names = "--no-trace", description = "Skip the traced run of each operation.")
    boolean noTrace;

    @Option(names = "--no-baseline", description = "Leave cuBLAS and NCCL out (no baseline, no speedups, no output check).")
    boolean noBaseline;

    @Option(names = "--no-cublaslt", description = "Leave cuBLASLt out: the baselines' GEMM is then cublasGemmEx.")
    boolean noCublasLt;

    @Mixin
    JobOptions job = new JobOptions(6, 30_000);

    @Mixin
    SeedOption seed = new SeedOption();

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        require(reps >= MIN_REPS, "--reps " + reps + " is below " + MIN_REPS);
        atLeast("--warmup", warmup, 0);
        atLeast("--group-m", groupM, 1);
        require(tileN >= 0, "--tile-n must be >= 0 (0: the width each shape gets), got " + tileN);
        require(splitK >= 0 && splitK <= 2, "--split-k must be 0 (the split each shape gets), 1 or 2, got " + splitK);
        require(!(quick && smallM), "--quick and --small-m are two shape lists; give one");
        job.validate();
        shapes();
    }

    private static String smallM() {
        List<String> out = new ArrayList<>();
        for (String op : List.of("all_reduce", "reduce_scatter")) {
            for (String nk : List.of("8192x28672", "4096x14336")) {
                for (int m : SMALL_MS) {
                    out.add(op + ":" + m + "x" + nk);
                }
            }
        }
        for (String nk : List.of("28672x8192", "14336x4096")) {
            for (int m : SMALL_MS) {
                out.add("all_gather:" + m + "x" + nk);
            }
        }
        return String.join(",", out);
    }

    /** The shapes, in order. */
    public List<FusedShape> shapes() {
        List<FusedShape> out = new ArrayList<>();
        for (String s : OptionChecks.items(quick ? QUICK_SHAPES : smallM ? SMALL_M_SHAPES : shapes)) {
            int colon = s.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("--shapes: '" + s + "' is not op:MxNxK");
            }
            out.add(FusedShape.parse(op(s.substring(0, colon)), s.substring(colon + 1)));
        }
        require(!out.isEmpty(), "--shapes names no shape");
        return out;
    }

    static FusedOp op(String id) {
        return OpNames.byId(FusedOp.values(), FusedOp::id, id,
                "unknown operation '" + id + "'; expected all_scatter, all_reduce, reduce_scatter or all_gather");
    }

    /** Where the traces go. */
    public Path traces() {
        if (traces != null) {
            return traces;
        }
        Path parent = out.path().toAbsolutePath().getParent();
        return parent == null ? Path.of(".") : parent;
    }

    /** Untimed calls per point; none with --check-only. */
    public int warmup() {
        return checkOnly ? 0 : warmup;
    }

    /** Timed calls per point; one with --check-only, whose time is not kept. */
    public int reps() {
        return checkOnly ? 1 : reps;
    }

    public boolean trace() {
        return !noTrace && !checkOnly;
    }

    public boolean baseline() {
        return !noBaseline;
    }

    /** Whether cuBLASLt (its heuristic's algorithm, CublasLtGemm.DEFAULT_WORKSPACE_BYTES of workspace) is timed beside cublasGemmEx. */
    public boolean cublasLt() {
        return !noBaseline && !noCublasLt;
    }

    /** The heap per rank and the device deadline. */
    public JobOptions job() {
        return job;
    }
}

package dev.irisjvm.bench.gemm;

import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.core.DType;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link GemmSweep}.
 *
 * <pre>{@code
 * GemmOptions o = new GemmOptions();
 * new CommandLine(o).parseArgs("--shapes", "4096x4096x4096:nk,4096x4096x4096:kn", "--reps", "50");
 * o.validate();
 * o.shapes();        // [4096x4096x4096:nk, 4096x4096x4096:kn]
 * }</pre>
 */
public final class GemmOptions {
    /**
     * The shapes of issue 5: square 8192 (both layouts), half-K 8192, a long-K MLP projection
     * (8192 x 4608 x 36864), square 4096 (both layouts), a short-M one (1024 x 8192 x 8192).
     */
    public static final String DEFAULT_SHAPES = "8192x8192x8192:nk,8192x8192x8192:kn,8192x8192x4096:nk,"
            + "8192x4608x36864:nk,4096x4096x4096:nk,4096x4096x4096:kn,1024x8192x8192:nk";
    /** Fewest timed repetitions a point may have per round (medians of fewer are too noisy to publish). */
    public static final int MIN_REPS = 20;
    /**
     * Six rounds: with three implementations, each takes every place in the order twice and comes
     * right after each other one equally often ({@link RoundOrder}).
     */
    public static final int DEFAULT_ROUNDS = 6;

    @Option(names = "--shapes", defaultValue = DEFAULT_SHAPES,
            description = "Comma-separated MxNxK[:nk|kn|km_nk|km_kn] (km_: A stored K x M; default: the issue's seven: ${DEFAULT-VALUE}).")
    String shapes;

    @Option(names = "--dtype", defaultValue = "bf16", description = "Input type: bf16 or f16 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--out-dtype", defaultValue = "same",
            description = "Output type: same (as the input) or f32 (default: ${DEFAULT-VALUE}).")
    String outDtype;

    @Option(names = "--warmup", defaultValue = "5",
            description = "Untimed calls per implementation, shape and round (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "30",
            description = "Timed calls per implementation, shape and round, at least " + MIN_REPS + " (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--rounds", defaultValue = "" + DEFAULT_ROUNDS,
            description = "Rounds per shape, the implementations' order changing each round; the median is over every round's "
                    + "timed calls (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--l2-factor", defaultValue = "2",
            description = "Rotate through input sets until they hold at least this many times the GPU's L2 (default: ${DEFAULT-VALUE}).")
    double l2Factor;

    @Option(names = "--group-m", defaultValue = "8", description = "Gemm.Options.groupM (default: ${DEFAULT-VALUE}).")
    int groupM;

    @Option(names = "--no-cublas", description = "Leave cuBLAS and cuBLASLt out (no baseline, no output check).")
    boolean noCublas;

    @Option(names = "--no-cublaslt", description = "Leave cuBLASLt out (cublasGemmEx is then the only baseline).")
    boolean noCublasLt;

    @Option(names = "--cublaslt-workspace-mib", defaultValue = "32",
            description = "Device workspace offered to cuBLASLt's heuristic and given to every call, MiB (default: ${DEFAULT-VALUE}).")
    int cublasLtWorkspaceMib;

    @Option(names = "--no-gate", description = "Do not hold the stream while the reps are queued.")
    boolean noGate;

    @Option(names = "--seed", description = "Seed of the random inputs (default: chosen and printed).")
    Long seed;

    @Option(names = "--out", defaultValue = "gemm-sweep.json", description = "JSON results (default: ${DEFAULT-VALUE}).")
    Path out;

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        shapes();
        inputType();
        outputType();
        require(warmup >= 1, "--warmup must be >= 1 (the first call loads and tunes), got " + warmup);
        require(reps >= MIN_REPS, "--reps must be >= " + MIN_REPS + ", got " + reps);
        require(rounds >= 1, "--rounds must be >= 1, got " + rounds);
        require(cublasLtWorkspaceMib >= 1, "--cublaslt-workspace-mib must be >= 1, got " + cublasLtWorkspaceMib);
        require(l2Factor >= 0, "--l2-factor must be >= 0, got " + l2Factor);
        require(groupM >= 1, "--group-m must be >= 1, got " + groupM);
    }

    public List<GemmShape> shapes() {
        return GemmShape.parseList(shapes);
    }

    public DType inputType() {
        DType t = OptionChecks.dtype(dtype);
        require(t == DType.BF16 || t == DType.F16, "--dtype '" + dtype + "' is not bf16 or f16");
        return t;
    }

    public DType outputType() {
        if (outDtype.trim().equalsIgnoreCase("same")) {
            return inputType();
        }
        DType t = OptionChecks.dtype(outDtype);
        require(t != null, "--out-dtype '" + outDtype + "' is not same or f32");
        require(t == DType.F32 || t == inputType(), "--out-dtype '" + outDtype + "': the output is the input type (same) or f32");
        return t;
    }

    /** Input sets to rotate through so that together they hold at least l2Factor x the L2. */
    public int sets(GemmShape s, long l2Bytes) {
        long one = s.inputBytes(inputType().byteSize());
        double want = l2Factor * l2Bytes;
        return (int) Math.max(1, Math.ceil(want / one));
    }

    public int warmup() {
        return warmup;
    }

    public int reps() {
        return reps;
    }

    public int rounds() {
        return rounds;
    }

    public double l2Factor() {
        return l2Factor;
    }

    public int groupM() {
        return groupM;
    }

    public boolean cublas() {
        return !noCublas;
    }

    /** Whether cuBLASLt is a baseline: neither --no-cublas nor --no-cublaslt. */
    public boolean cublasLt() {
        return !noCublas && !noCublasLt;
    }

    public long cublasLtWorkspaceBytes() {
        return (long) cublasLtWorkspaceMib << 20;
    }

    public boolean gate() {
        return !noGate;
    }

    public Long seed() {
        return seed;
    }

    public Path out() {
        return out;
    }
}

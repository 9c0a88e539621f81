package dev.irisjvm.bench.gemm;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.SeedOption;
import dev.irisjvm.bench.results.GemmShapeOrigin;
import dev.irisjvm.core.DType;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link GemmSweep}.
 *
 * <pre>{@code
 * GemmOptions o = new GemmOptions();
 * new CommandLine(o).parseArgs("--shapes", "4096x4096x4096:nk,4096x4096x4096:kn", "--reps", "50");
 * o.validate();
 * o.shapes();        // [4096x4096x4096:nk, 4096x4096x4096:kn]
 *
 * new CommandLine(o = new GemmOptions()).parseArgs("--suite", "models");
 * o.shapes().size();  // 117, with 3 warm-up calls, 20 timed calls, 6 rounds (GemmSuite.MODELS)
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

    @Option(names = "--shapes",
            description = "Comma-separated MxNxK[:nk|kn|km_nk|km_kn] (km_: A stored K x M), instead of a suite (default: the headline suite, issue 5's seven: "
                    + DEFAULT_SHAPES + ").")
    String shapes;

    @Option(names = "--suite", paramLabel = "NAME",
            description = {"A named shape list: headline (the default: issue 5's seven large shapes; 5 warm-up calls, 30 timed "
                    + "calls, 6 rounds) or models (issue 26: 117 shapes, the linear layers of Llama-3 8B, 70B and 405B and "
                    + "Mixtral 8x7B's experts at TP 1, 2, 4 and 8, each at a decode M of 1 to 128 and a prefill M of 256 to 16384 "
                    + "in both B layouts, plus 9 shapes off the tile grid; 3 warm-up calls, 20 timed calls, 6 rounds). Each call "
                    + "of models stays under 2^41 FLOPs; at the headline run's ~700 TFLOP/s and ~4 TB/s, with a 5 µs floor per "
                    + "call, its timed and warm-up calls come to about 20 s of GPU time (an estimate, not a measurement), "
                    + "setting up and checking each shape adds to it. --warmup, --reps and --rounds override a suite's.",
                    "Not with --shapes."})
    String suite;

    @Option(names = "--dtype", defaultValue = "bf16", description = "Input type: bf16 or f16 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--out-dtype", defaultValue = "same",
            description = "Output type: same (as the input) or f32 (default: ${DEFAULT-VALUE}).")
    String outDtype;

    @Option(names = "--warmup",
            description = "Untimed calls per implementation, shape and round (default: the suite's, 5 for headline and --shapes, 3 "
                    + "for models).")
    Integer warmup;

    @Option(names = "--reps",
            description = "Timed calls per implementation, shape and round, at least " + MIN_REPS + " (default: the suite's, 30 for "
                    + "headline and --shapes, 20 for models).")
    Integer reps;

    @Option(names = "--rounds",
            description = "Rounds per shape, the implementations' order changing each round; the median is over every round's "
                    + "timed calls (default: the suite's, " + DEFAULT_ROUNDS + ").")
    Integer rounds;

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

    @Option(names = "--portable", description = "Also time the portable mainloop (mma.sync, GemmMainloop.PORTABLE) as "
            + "implementation iris-portable, beside the one Gemm chooses for this GPU.")
    boolean portable;

    @Option(names = "--tuned", description = "Also time Gemm.Options.withTune(true) as implementation iris-tuned: its first "
            + "call of a shape (a warm-up) times the schedules the shape can take and keeps the fastest.")
    boolean tuned;

    @Option(names = "--no-gate", description = "Do not hold the stream while the reps are queued.")
    boolean noGate;

    @Mixin
    SeedOption seed = new SeedOption();

    @Option(names = "--out", defaultValue = "gemm-sweep.json", description = "JSON results (default: ${DEFAULT-VALUE}).")
    Path out;

    /** Throws IllegalArgumentException naming the first option that is out of range. */
    public void validate() {
        require(shapes == null || suite == null, "--shapes and --suite: give one of them, not both");
        shapes();
        inputType();
        outputType();
        require(warmup() >= 1, "--warmup must be >= 1 (the first call loads and tunes), got " + warmup());
        atLeast("--reps", reps(), MIN_REPS);
        atLeast("--rounds", rounds(), 1);
        atLeast("--cublaslt-workspace-mib", cublasLtWorkspaceMib, 1);
        require(l2Factor >= 0, "--l2-factor must be >= 0, got " + l2Factor);
        atLeast("--group-m", groupM, 1);
    }

    /**
     * Writes the suite and its settings into the options left out, so that the command the results
     * record ({@code RunRecord.command}) names them and replays the same run.
     */
    void settle() {
        if (shapes == null) {
            suite = suite().id();
        }
        warmup = warmup();
        reps = reps();
        rounds = rounds();
    }

    /** The shapes of --shapes, else of the suite. */
    public List<GemmShape> shapes() {
        return shapes != null ? GemmShape.parseList(shapes) : suite().shapes();
    }

    /** The suite named by --suite, {@link GemmSuite#HEADLINE} without one; its settings also stand for --shapes. */
    public GemmSuite suite() {
        return suite == null ? GemmSuite.HEADLINE : GemmSuite.of(suite);
    }

    /** The suite's name for the results, or null where --shapes chose the shapes. */
    public String suiteName() {
        return shapes != null ? null : suite().id();
    }

    /** Where each shape comes from: the suite's origins, none for --shapes. */
    public List<GemmShapeOrigin> origins() {
        return shapes != null ? List.of() : suite().origins();
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
        return warmup != null ? warmup : suite().warmup;
    }

    public int reps() {
        return reps != null ? reps : suite().reps;
    }

    public int rounds() {
        return rounds != null ? rounds : suite().rounds;
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

    public Path out() {
        return out;
    }
}

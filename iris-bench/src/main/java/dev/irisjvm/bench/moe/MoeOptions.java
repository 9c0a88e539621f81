package dev.irisjvm.bench.moe;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.RoundsOptions;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link MoeSweep}: the models, token counts and low-latency cases, the
 * output, and {@link RoundsOptions}.
 *
 * <pre>{@code
 * MoeOptions o = new MoeOptions();
 * new CommandLine(o).parseArgs("--models", "mixtral", "--tokens", "128,16384");
 * o.validate();
 * o.cases();   // [mixtral T=128, mixtral T=16384], the first with MoeLowLatency too
 * }</pre>
 */
public final class MoeOptions {
    /** Issue 27's token counts per rank. */
    public static final String DEFAULT_TOKENS = "128,256,512,1024,2048,4096,8192,16384";
    /** Fewest timed repetitions per round (medians of fewer are too noisy to publish). */
    public static final int MIN_REPS = 10;
    /**
     * Six rounds: with three implementations each takes every place in the order twice
     * (dev.irisjvm.bench.gemm.RoundOrder).
     */
    public static final int DEFAULT_ROUNDS = 6;

    @Mixin
    ResultFileOption out = new ResultFileOption("moe-sweep.json");

    @Option(names = "--models", defaultValue = "deepseek_v3,mixtral",
            description = "Comma-separated layers: deepseek_v3 (H 7168, top-8 of 256), mixtral (H 4096, top-2 of 8) "
                    + "(default: ${DEFAULT-VALUE}).")
    String models;

    @Option(names = "--tokens", defaultValue = DEFAULT_TOKENS,
            description = "Comma-separated tokens per rank (default: ${DEFAULT-VALUE}).")
    String tokens;

    @Option(names = "--ll-max-tokens", defaultValue = "512",
            description = "MoeLowLatency is measured too up to this many tokens per rank; 0 for never (default: ${DEFAULT-VALUE}).")
    int llMaxTokens;

    @Option(names = "--layer-max-tokens", defaultValue = "16384",
            description = "The expert layer (dispatch, one H x H GEMM per expert, combine: in sequence, fused, fed by the dispatch) "
                    + "is measured too up to this many tokens per rank; 0 for never (default: ${DEFAULT-VALUE}).")
    int layerMaxTokens;

    @Option(names = "--layer-only", description = "Only the expert layer, at every token count: no dispatch or combine against "
            + "NCCL, so one rank on one GPU is enough (the fed layer's overlap of copy and GEMM, measured without NVLink).")
    boolean layerOnly;

    /**
     * The largest case needs about 12 GiB of heap per rank (MoeLowLatency at T = 512 about 16), and
     * DeepSeek-V3's expert layer 26 GiB / world more for its weights; a fixed seed routes every run
     * the same way.
     */
    @Mixin
    RoundsOptions rounds = new RoundsOptions(48, 27).calls(5, 20, MIN_REPS).rounds(DEFAULT_ROUNDS).deviceTimeoutMs(30_000);

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        rounds.validate();
        atLeast("--ll-max-tokens", llMaxTokens, 0);
        atLeast("--layer-max-tokens", layerMaxTokens, 0);
        cases();
    }

    /** Every case: each model at each token count, in that order. */
    public List<MoeCase> cases() {
        List<MoeModel> ms = OptionChecks.nonEmpty("--models", OptionChecks.items(models).stream().map(MoeModel::of).toList());
        List<Integer> ts = OptionChecks.nonEmpty("--tokens", OptionChecks.ints("--tokens", tokens));
        List<MoeCase> out = new ArrayList<>();
        for (MoeModel m : ms) {
            for (int t : ts) {
                require(t >= 1, "--tokens: " + t + " tokens per rank; expected at least 1");
                out.add(layerOnly ? new MoeCase(m, t, false, true) : new MoeCase(m, t, t <= llMaxTokens, t <= layerMaxTokens));
            }
        }
        return out;
    }

    /** Only the expert layer: no exchange against NCCL, and one rank allowed. */
    public boolean layerOnly() {
        return layerOnly;
    }

    /** The warm-up, timed calls, rounds, heap, device deadline and seed. */
    public RoundsOptions rounds() {
        return rounds;
    }
}

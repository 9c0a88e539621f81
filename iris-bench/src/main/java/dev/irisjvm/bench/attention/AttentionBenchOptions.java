package dev.irisjvm.bench.attention;

import static dev.irisjvm.bench.OptionChecks.atLeast;
import static dev.irisjvm.bench.OptionChecks.ints;
import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.SeedOption;
import dev.irisjvm.kernels.attention.FlashDecodeProblem;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link AttentionBench}. The defaults are issue 6's shapes: B 1, 32
 * query heads, 8 K/V heads, head size 128, BF16; the local kernel at S = 4K and 16K; ring attention
 * at S = 32K and 128K in all; flash-decode at batch 1 and 8 with 32K to 512K tokens per sequence in
 * all (split over the ranks).
 *
 * <pre>{@code
 * AttentionBenchOptions o = new AttentionBenchOptions();
 * new CommandLine(o).parseArgs("--parts", "ring", "--ring-seqs", "32768");
 * o.validate(2);
 * }</pre>
 */
public final class AttentionBenchOptions {
    /** The three parts, in run order. */
    public static final List<String> PARTS = List.of("local", "ring", "decode");

    @Option(names = "--parts", defaultValue = "local,ring,decode", description = "Which parts to run (default: ${DEFAULT-VALUE}).")
    String parts;

    @Option(names = "--local-seqs", defaultValue = "4096,16384", description = "Sequence lengths of the local kernel (default: ${DEFAULT-VALUE}).")
    String localSeqs;

    @Option(names = "--ring-seqs", defaultValue = "32768,131072",
            description = "Whole sequence lengths of ring attention, split over the ranks (default: ${DEFAULT-VALUE}).")
    String ringSeqs;

    @Option(names = "--decode-lens", defaultValue = "32768,65536,131072,262144,524288",
            description = "KV tokens per sequence of flash-decode, split over the ranks (default: ${DEFAULT-VALUE}).")
    String decodeLens;

    @Option(names = "--decode-batches", defaultValue = "1,8", description = "Batches of flash-decode (default: ${DEFAULT-VALUE}).")
    String decodeBatches;

    @Option(names = "--decode-chunk-len", defaultValue = "0",
            description = "Keys per CTA of flash-decode, a multiple of 64 up to 1024; 0: the library's default, "
                    + "FlashDecodeProblem.defaultChunkLen (default: ${DEFAULT-VALUE}).")
    int decodeChunkLen;

    @Option(names = "--q-heads", defaultValue = "32", description = "Query heads (default: ${DEFAULT-VALUE}).")
    int qHeads;

    @Option(names = "--kv-heads", defaultValue = "8", description = "Key/value heads (default: ${DEFAULT-VALUE}).")
    int kvHeads;

    @Option(names = "--head-dim", defaultValue = "128", description = "Head size, 64 or 128 (default: ${DEFAULT-VALUE}).")
    int headDim;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed calls per point (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--reps", defaultValue = "10",
            description = "Timed calls per point of the local kernel and ring attention (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--decode-reps", defaultValue = "50", description = "Timed calls per flash-decode point (default: ${DEFAULT-VALUE}).")
    int decodeReps;

    @Option(names = "--portable", description = "Also time the portable mainloop (mma.sync, Attention.create(GemmMainloop.PORTABLE)) "
            + "in the local part as implementation iris-portable, beside the one Attention chooses for this GPU.")
    boolean portable;

    @Option(names = "--sdpa", description = "The JSON that attention_sdpa.py wrote, included in the results.")
    Path sdpa;

    @Mixin
    SeedOption seed = new SeedOption();

    @Mixin
    ResultFileOption out = new ResultFileOption("attention-bench.json");

    /** Throws IllegalArgumentException naming the first option out of range for a job of {@code world} ranks. */
    public void validate(int world) {
        parts();
        for (int s : localSeqs()) {
            require(s >= 128 && s % 128 == 0, "--local-seqs: " + s + " is not a positive multiple of 128");
        }
        for (int s : ringSeqs()) {
            require(s % (256L * world) == 0, "--ring-seqs: " + s + " is not a multiple of 256 x " + world
                    + " (zig-zag cuts each of the " + world + " shards into two chunks of a multiple of 128)");
        }
        for (int s : decodeLens()) {
            require(s % world == 0 && s / world >= 1, "--decode-lens: " + s + " does not split evenly over " + world + " ranks");
        }
        for (int b : decodeBatches()) {
            require(b >= 1, "--decode-batches: " + b + " must be >= 1");
        }
        require(decodeChunkLen == 0 || (decodeChunkLen % 64 == 0 && decodeChunkLen <= 1024),
                "--decode-chunk-len must be 0 or a multiple of 64 up to 1024, got " + decodeChunkLen);
        require(qHeads >= 1 && kvHeads >= 1 && qHeads % kvHeads == 0, "--q-heads " + qHeads + " must be a multiple of --kv-heads " + kvHeads);
        require(headDim == 64 || headDim == 128, "--head-dim must be 64 or 128, got " + headDim);
        atLeast("--warmup", warmup, 1);
        atLeast("--reps", reps, 3);
        atLeast("--decode-reps", decodeReps, 3);
    }

    public Set<String> parts() {
        Set<String> out = new LinkedHashSet<>();
        for (String p : OptionChecks.items(parts)) {
            String name = p.toLowerCase(Locale.ROOT);
            require(PARTS.contains(name), "--parts: unknown part '" + p + "'; expected some of " + PARTS);
            out.add(name);
        }
        require(!out.isEmpty(), "--parts names no part");
        return out;
    }

    /** Whether the local part also times the portable mainloop as an implementation of its own (--portable). */
    public boolean portable() {
        return portable;
    }

    /** The local part's shapes as attention_sdpa.py's options, so that SDPA is measured on what this sweep runs. */
    public List<String> sdpaShape() {
        return List.of("--seqs", localSeqs, "--head-dim", String.valueOf(headDim), "--q-heads", String.valueOf(qHeads), "--kv-heads",
                String.valueOf(kvHeads));
    }

    public List<Integer> localSeqs() {
        return ints("--local-seqs", localSeqs);
    }

    public List<Integer> ringSeqs() {
        return ints("--ring-seqs", ringSeqs);
    }

    public List<Integer> decodeLens() {
        return ints("--decode-lens", decodeLens);
    }

    public List<Integer> decodeBatches() {
        return ints("--decode-batches", decodeBatches);
    }

    /** Keys per CTA of flash-decode for this point: --decode-chunk-len, else the library's default. */
    public int decodeChunkLen(int batch, int lenPerRank, int multiprocessors) {
        return decodeChunkLen > 0 ? decodeChunkLen : FlashDecodeProblem.defaultChunkLen(batch, kvHeads, lenPerRank, multiprocessors);
    }
}

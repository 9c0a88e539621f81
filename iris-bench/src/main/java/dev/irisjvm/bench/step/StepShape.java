package dev.irisjvm.bench.step;

import java.util.Locale;

/**
 * The MLP of one training step: {@code tokens} tokens of the whole sequence (M), width {@code hidden}
 * (H), inner width {@code ffn} (F). On {@code world} ranks each rank holds tokens / world of the
 * tokens and ffn / world of the inner width (sequence and tensor parallel, as in Megatron-LM).
 *
 * <pre>{@code
 * StepShape s = StepShape.parse("8192x8192x28672");   // Llama-3 70B's MLP
 * s.ffnPerRank(2);                                    // 14336
 * }</pre>
 */
record StepShape(int tokens, int hidden, int ffn) {
    /** Llama-3 70B's MLP at 8192 tokens: issue 25's shape. */
    static final String DEFAULT = "8192x8192x28672";

    StepShape {
        if (tokens < 1 || hidden < 1 || ffn < 1) {
            throw new IllegalArgumentException("--shape " + tokens + "x" + hidden + "x" + ffn + ": every size must be at least 1");
        }
    }

    /** "TxHxF", e.g. "8192x8192x28672". */
    static StepShape parse(String text) {
        String[] parts = text.trim().toLowerCase(Locale.ROOT).split("x");
        if (parts.length != 3) {
            throw new IllegalArgumentException("--shape '" + text + "': expected TOKENSxHIDDENxFFN, e.g. " + DEFAULT);
        }
        try {
            return new StepShape(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape '" + text + "': expected three whole numbers, e.g. " + DEFAULT);
        }
    }

    /** Why the shape does not split over {@code world} ranks, or null. */
    String unsplittable(int world) {
        if (tokens % world != 0) {
            return "tokens " + tokens + " do not split over " + world + " ranks";
        }
        if (ffn % world != 0) {
            return "ffn " + ffn + " does not split over " + world + " ranks";
        }
        return null;
    }

    int tokensPerRank(int world) {
        return tokens / world;
    }

    int ffnPerRank(int world) {
        return ffn / world;
    }

    /** The six GEMMs of one rank's step: forward two, backward four, each 2 x tokens x hidden x ffn / world. */
    double flopsPerRank(int world) {
        return 6 * 2.0 * tokens * hidden * ffnPerRank(world);
    }

    /** Bytes one rank sends per step: two all-gathers of its rows and two reduce-scatters, (world - 1) / world of T x H BF16 each. */
    long commBytesPerRank(int world) {
        return 4L * (world - 1) * tokensPerRank(world) * hidden * 2;
    }

    @Override
    public String toString() {
        return tokens + "x" + hidden + "x" + ffn;
    }
}

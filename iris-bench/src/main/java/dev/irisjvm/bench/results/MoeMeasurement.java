package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One timed point of the MoE sweep: a model's layer at T tokens per rank, one operation by one
 * implementation, timed with CUDA events on every rank. Per repetition the slowest rank counts (a
 * rank's tokens are not home until every rank's exchange is done); {@code medianUs} is the median
 * of those maxima over every round's repetitions.
 *
 * @param model           {@code deepseek_v3} or {@code mixtral}
 * @param tokens          tokens per rank (T)
 * @param hidden          elements per token row (H)
 * @param experts         experts of the layer (E)
 * @param topK            experts per token
 * @param world           ranks
 * @param op              {@link #DISPATCH}, {@link #COMBINE}, {@link #DISPATCH_COMBINE} or {@link #LAYER} (the expert layer:
 *                        dispatch, one H x H GEMM per expert, combine)
 * @param impl            {@link #IRIS} (MoeDispatch / MoeCombine; for the layer the three in sequence with
 *                        MoeExpertGemm.gemm between them), {@link #IRIS_LL} (MoeLowLatency), {@link #NCCL}
 *                        (all-to-all-v as one ncclSend/ncclRecv group; its combine is the return transfer alone), and for
 *                        the layer {@link #IRIS_FUSED} (dispatch, then MoeExpertGemm.gemmAndCombine) and {@link #IRIS_FED}
 *                        (MoeExpertGemm.forward: the GEMM fed by the dispatch)
 * @param reps            timed repetitions over all rounds
 * @param roundMediansUs  each round's median, in the order the rounds ran
 * @param bytesPerRank    bytes of token rows one rank sends per call: T x topK x H x 2 (its own rows included)
 * @param check           {@link #OK} when the outputs matched, {@link #REFERENCE} for NCCL, {@link #NOT_RUN} and why where
 *                        nothing was timed, else what was wrong with the outputs
 */
public record MoeMeasurement(String model, int tokens, int hidden, int experts, int topK, int world, String op, String impl,
                             int reps, double medianUs, double minUs, double maxUs, List<Double> roundMediansUs, long bytesPerRank,
                             String check) implements CheckedPoint {
    public static final String DISPATCH = "dispatch";
    public static final String COMBINE = "combine";
    public static final String DISPATCH_COMBINE = "dispatch_combine";
    public static final String LAYER = "layer";
    public static final String IRIS = "iris";
    public static final String IRIS_LL = "iris_ll";
    public static final String NCCL = "nccl";
    public static final String IRIS_FUSED = "iris_fused";
    public static final String IRIS_FED = "iris_fed";
    /** The layer's implementations: the sequence (the baseline) first. */
    public static final List<String> LAYER_IMPLS = List.of(IRIS, IRIS_FUSED, IRIS_FED);

    public MoeMeasurement {
        roundMediansUs = roundMediansUs == null ? List.of() : List.copyOf(roundMediansUs);
    }

    /**
     * Whether the output check failed (not merely a point that did not run). Unlike the other
     * points' check, an empty one fails and a missing one does not.
     */
    @Override
    public boolean checkFailed() {
        return check != null && !OK.equals(check) && !REFERENCE.equals(check) && !check.startsWith(NOT_RUN);
    }

    /** A point with nothing timed; its check says {@link #NOT_RUN} and {@code why}. */
    public static MoeMeasurement failed(String model, int tokens, int hidden, int experts, int topK, int world, String op,
                                        String impl, String why) {
        return new MoeMeasurement(model, tokens, hidden, experts, topK, world, op, impl, 0, 0, 0, 0, List.of(), 0,
                CheckedPoint.notRun(why));
    }
}

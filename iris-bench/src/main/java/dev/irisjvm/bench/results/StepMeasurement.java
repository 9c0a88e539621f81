package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One timed point of the training-step benchmark: forward + backward of a tensor-parallel,
 * sequence-parallel transformer MLP on {@code world} ranks, by one implementation, timed with CUDA
 * events on every rank. Per repetition the slowest rank counts (the step is done when its last
 * rank is); {@code medianUs} is the median of those maxima over every round's repetitions.
 *
 * @param tokens           tokens of the whole sequence (M); each rank holds tokens / world of them
 * @param hidden           the model's width (H)
 * @param ffn              the MLP's inner width (F); each rank holds ffn / world of it
 * @param world            ranks (the tensor-parallel degree)
 * @param impl             {@link #FUSED} (the step with the fused operations), {@link #BASELINE} (the same step with cuBLAS
 *                         then NCCL in sequence), or one of its parts alone: {@link #CUBLAS_GEMMS}, {@link #IRIS_GEMMS},
 *                         {@link #NCCL}
 * @param reps             timed repetitions over all rounds
 * @param medianUs         median over the repetitions of the slowest rank's time
 * @param minUs            fastest repetition
 * @param maxUs            slowest repetition
 * @param roundMediansUs   each round's median, in the order the rounds ran
 * @param flopsPerRank     the six GEMMs' floating-point operations on one rank: 6 x 2 x tokens x hidden x ffn / world
 * @param commBytesPerRank bytes one rank sends per step: two all-gathers of its tokens' rows and two reduce-scatters of
 *                         partials, (world - 1) / world of tokens x hidden x 2 bytes each
 * @param check            for {@link #FUSED}: {@link #OK} when its outputs matched the baseline's, else what was wrong; for
 *                         {@link #BASELINE}: {@link #REFERENCE}; for the parts: empty (not checked); {@link #NOT_RUN} and why
 *                         where nothing was timed
 */
public record StepMeasurement(int tokens, int hidden, int ffn, int world, String impl, int reps, double medianUs, double minUs,
                              double maxUs, List<Double> roundMediansUs, double flopsPerRank, long commBytesPerRank, String check)
        implements CheckedPoint {
    public static final String FUSED = "fused";
    public static final String BASELINE = "baseline";
    public static final String CUBLAS_GEMMS = "cublas_gemms";
    public static final String IRIS_GEMMS = "iris_gemms";
    public static final String NCCL = "nccl";

    public StepMeasurement {
        roundMediansUs = roundMediansUs == null ? List.of() : List.copyOf(roundMediansUs);
        check = check == null ? "" : check;
    }

    /** A point with nothing timed; its check says {@link #NOT_RUN} and {@code why}. */
    public static StepMeasurement failed(int tokens, int hidden, int ffn, int world, String impl, String why) {
        return new StepMeasurement(tokens, hidden, ffn, world, impl, 0, 0, 0, 0, List.of(), 0, 0,
                CheckedPoint.notRun(why));
    }
}

package dev.irisjvm.bench.results;

import java.util.List;

/**
 * One timed point of the nodes benchmark: a world collective over every rank of a job of several
 * nodes, by one implementation, timed with CUDA events on every rank. Per repetition the slowest
 * rank counts; {@code medianUs} is the median of those maxima over every round's repetitions.
 *
 * @param op                 all_reduce, all_gather, reduce_scatter or all_to_all
 * @param dtype              the element type, e.g. bf16
 * @param bytes              the size nccl-tests names the point by (all-gather: the output per rank, reduce-scatter: the
 *                           input per rank, the others: the buffer per rank)
 * @param nodes              nodes of the job (simulated or real)
 * @param ranksPerNode       ranks on each node
 * @param impl               {@link #HIERARCHICAL} (WorldCollectives: the node level on the symmetric heap, the rail level in
 *                           NCCL) or {@link #FLAT} (one NCCL collective over every rank)
 * @param reps               timed repetitions over all rounds
 * @param medianUs           median over the repetitions of the slowest rank's time
 * @param minUs              fastest repetition
 * @param maxUs              slowest repetition
 * @param roundMediansUs     each round's median, in the order the rounds ran
 * @param busBandwidthGBs    nccl-tests' bus bandwidth of the median: bytes ÷ time × its factor (2 (n - 1) / n for
 *                           all-reduce, (n - 1) / n for the others, n the ranks); 0 where nothing was timed
 * @param check              for {@link #HIERARCHICAL}: {@link #OK} when its output matched the flat collective's, else what
 *                           differs; for {@link #FLAT}: {@link #REFERENCE}; {@link #NOT_RUN} and why where nothing was timed
 */
public record NodesMeasurement(String op, String dtype, long bytes, int nodes, int ranksPerNode, String impl, int reps,
                               double medianUs, double minUs, double maxUs, List<Double> roundMediansUs, double busBandwidthGBs,
                               String check) implements CheckedPoint {
    public static final String HIERARCHICAL = "hierarchical";
    public static final String FLAT = "flat_nccl";

    public NodesMeasurement {
        roundMediansUs = roundMediansUs == null ? List.of() : List.copyOf(roundMediansUs);
        check = check == null ? "" : check;
    }

    /** A point with nothing timed; its check says {@link #NOT_RUN} and {@code why}. */
    public static NodesMeasurement failed(String op, String dtype, long bytes, int nodes, int ranksPerNode, String impl, String why) {
        return new NodesMeasurement(op, dtype, bytes, nodes, ranksPerNode, impl, 0, 0, 0, 0, List.of(), 0,
                CheckedPoint.notRun(why));
    }
}

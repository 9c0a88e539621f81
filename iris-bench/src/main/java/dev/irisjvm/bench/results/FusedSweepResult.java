package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A whole fused sweep as it is stored next to its report (raw JSON): when, where, with which
 * command and settings, every measurement, and the traced runs.
 *
 * @param date      ISO date-time of the run (UTC)
 * @param hardware  e.g. "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * @param software  e.g. "CUDA 13.0 (driver 13.0), cuBLAS 13.0.2, NCCL 2.28.3, Java 17.0.15"
 * @param command   the exact command that produced it
 * @param worldSize ranks (TP)
 */
public record FusedSweepResult(String date, String hardware, String software, String command, int worldSize, int warmup, int reps,
                               int groupM, List<FusedMeasurement> measurements, List<Trace> traces) implements StoredResult {
    /**
     * One traced call (FusedConfig.withTracing) and its Chrome trace file (all ranks).
     *
     * @param file  the trace's file name, in the folder of the sweep JSON
     * @param ranks per rank: the busy times of dev.irisjvm.kernels.fused.TileTrace.Summary
     */
    public record Trace(String op, String shape, String variant, String file, List<RankSummary> ranks) {}

    /** TileTrace.Summary of one rank, in microseconds. */
    public record RankSummary(int rank, int computeEvents, int epilogueEvents, int copyEvents, double spanUs, double computeUs,
                              double communicationUs, double overlappedUs) {
        public double hiddenFraction() {
            return communicationUs > 0 ? overlappedUs / communicationUs : Double.NaN;
        }
    }
}

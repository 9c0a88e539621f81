package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A run of the training-step benchmark as it is stored next to its report (raw JSON,
 * {@code training-step.json}).
 *
 * @param date           ISO date-time of the run (UTC)
 * @param hardware       e.g. "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * @param software       e.g. "CUDA 13.0 (driver 13.0), cuBLAS 13.0.2, NCCL 2.28.3, Java 17.0.15"
 * @param command        the exact command that produced it
 * @param worldSize      ranks
 * @param maxRanksPerGpu most ranks on one GPU: above 1 the ranks took turns on a GPU, and the report compares nothing
 * @param warmup         untimed steps per implementation and round
 * @param reps           timed steps per implementation and round
 * @param rounds         rounds, the implementations' order changing each round
 * @param seed           the inputs' seed
 */
public record StepSweepResult(String date, String hardware, String software, String command, int worldSize, int maxRanksPerGpu,
                              int warmup, int reps, int rounds, long seed, List<StepMeasurement> measurements)
        implements StoredResult, RanksPerGpu {
    public StepSweepResult {
        measurements = measurements == null ? List.of() : List.copyOf(measurements);
    }
}

package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A whole sweep as it is stored next to its report (raw JSON): when, where, with which command,
 * and every measurement.
 *
 * @param date      ISO date-time of the run (UTC)
 * @param hardware  e.g. "2 x NVIDIA H200 (132 SMs), NV18 NVLink, driver 580.159.04"
 * @param software  e.g. "CUDA 13.0 (driver 13.0), NCCL 2.28.3, Java 17.0.15"
 * @param command   the exact command that produced it
 * @param worldSize number of ranks
 */
public record SweepResult(String date, String hardware, String software, String command, int worldSize,
                          List<Measurement> measurements) implements StoredResult {
}

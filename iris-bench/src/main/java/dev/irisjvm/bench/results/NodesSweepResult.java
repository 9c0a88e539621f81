package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A run of the nodes benchmark (hierarchical against flat NCCL world collectives) as it is stored
 * next to its report (raw JSON, {@code nodes-sweep.json}).
 *
 * @param date           ISO date-time of the run (UTC)
 * @param hardware       e.g. "2 x NVIDIA H200 (132 SMs, 140 GiB, CC 9.0)"
 * @param software       e.g. "CUDA 13.0 (driver 13.0), NCCL 2.28.3, Java 17.0.15"
 * @param command        the exact command that produced it
 * @param worldSize      ranks
 * @param nodes          nodes of the job
 * @param ranksPerNode   ranks on each node
 * @param simulatedNodes whether the nodes were simulated on one machine (NCCL between them over loopback sockets, which
 *                       says nothing about a real network)
 * @param maxRanksPerGpu most ranks on one GPU: above 1 the ranks took turns on a GPU, and the report compares nothing
 * @param warmup         untimed calls per implementation, point and round
 * @param reps           timed calls per implementation, point and round
 * @param rounds         rounds, the implementations' order changing each round
 * @param seed           the inputs' seed
 */
public record NodesSweepResult(String date, String hardware, String software, String command, int worldSize, int nodes,
                               int ranksPerNode, boolean simulatedNodes, int maxRanksPerGpu, int warmup, int reps, int rounds,
                               long seed, List<NodesMeasurement> measurements)
        implements StoredResult, RanksPerGpu {
    public NodesSweepResult {
        measurements = measurements == null ? List.of() : List.copyOf(measurements);
    }
}

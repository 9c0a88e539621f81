package dev.irisjvm.bench.results;

import java.util.List;

/**
 * A GEMM sweep as it is stored next to its report (raw JSON): when, where, with which command and
 * settings, and every measurement.
 *
 * @param date            ISO date-time of the run (UTC)
 * @param hardware        e.g. "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0, L2 60 MiB)"
 * @param software        e.g. "CUDA 13.0 (driver 13.0), cuBLAS 13.0.2, Java 17.0.15"
 * @param command         the exact command that produced it
 * @param l2Bytes         the GPU's L2 size, which the input rotation is sized from
 * @param l2Factor        input sets per shape hold at least this many L2s together
 * @param warmup          untimed calls per point, per round where there are rounds
 * @param groupM          the GEMM's grouped tile order width
 * @param measurements    every point
 * @param rounds          rounds per shape, the implementations' order changing each round
 *                        (dev.irisjvm.bench.gemm.RoundOrder); 0 in sweeps from before rounds, which timed
 *                        each shape once, Iris first and cuBLAS second, and had no cuBLASLt
 * @param cublasLtWorkspaceBytes the device workspace offered to cuBLASLt; 0 where cuBLASLt did not run
 * @param suite           the named shape list (dev.irisjvm.bench.gemm.GemmSuite: "headline", "models"); null where
 *                        the shapes were given one by one, and in sweeps from before suites
 * @param origins         where each shape of the suite comes from (model, layer, tensor-parallel degree), one or
 *                        more per shape; empty or null where the suite names none
 */
public record GemmSweepResult(String date, String hardware, String software, String command, long l2Bytes, double l2Factor,
                              int warmup, int groupM, List<GemmMeasurement> measurements, int rounds, long cublasLtWorkspaceBytes,
                              String suite, List<GemmShapeOrigin> origins) implements StoredResult {
    /** The origins, never null. */
    public List<GemmShapeOrigin> originList() {
        return origins == null ? List.of() : origins;
    }

    /** Whether the implementations took turns in rounds (and cuBLASLt was part of the sweep, if it could run). */
    public boolean interleaved() {
        return rounds > 0;
    }
}

package dev.irisjvm.bench.results;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Path;
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
 * @param warmup          untimed calls per point
 * @param groupM          the GEMM's grouped tile order width
 * @param measurements    every point
 */
public record GemmSweepResult(String date, String hardware, String software, String command, long l2Bytes, double l2Factor,
                              int warmup, int groupM, List<GemmMeasurement> measurements) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public void write(Path file) throws IOException {
        JSON.writeValue(file.toFile(), this);
    }

    public static GemmSweepResult read(Path file) throws IOException {
        return JSON.readValue(file.toFile(), GemmSweepResult.class);
    }
}

package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code iris-bench gemm}: the Iris GEMM against cuBLAS and cuBLASLt on one GPU, timed with CUDA events in rounds, and gemm.md. */
@Command(name = "gemm", mixinStandardHelpOptions = true,
        description = {"The GEMM sweep on one of this host's GPUs (Iris against cublasGemmEx and cuBLASLt in the same run, taking "
                + "turns over rounds), then gemm.md, "
                + "a PNG chart and the raw JSON. Sweep options: dev.irisjvm.bench.gemm.GemmSweep --help.",
                "--quick: 4096^3 in both layouts and 1024 x 8192 x 8192 only, 20 timed calls each.",
                "cuBLAS: libcublas.so.13 and libcublasLt.so.13 must be loadable (in a bundle, source env.sh first)."})
final class GemmRun extends BenchRun {
    @Mixin
    DeviceChoice device = new DeviceChoice();

    GemmRun() {
        super(ReportKind.GEMM, "dev.irisjvm.bench.gemm.GemmSweep",
                List.of("--shapes", "4096x4096x4096:nk,4096x4096x4096:kn,1024x8192x8192:nk", "--reps", "20"));
    }

    @Override
    int ranks() {
        device.validate();
        return 0;
    }

    @Override
    Map<String, String> sweepEnvironment() {
        return device.environment();
    }
}

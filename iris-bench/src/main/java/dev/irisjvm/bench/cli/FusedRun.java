package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code iris-bench fused}: the fused GEMM + communication sweep, traces and JMH, then fused.md. */
@Command(name = "fused", mixinStandardHelpOptions = true,
        description = {"The fused GEMM + communication benchmarks on this host's GPUs: the CUDA-event sweep of every fused "
                + "kernel and variant against cuBLAS then NCCL (and each part alone), one traced call per operation and "
                + "variant, JMH inside every rank (FusedBenchmark), then fused.md, a speedup chart, trace timelines and the "
                + "raw JSON. About 3-5 minutes on 2 x H200. Sweep options: dev.irisjvm.bench.fused.FusedSweep --help.",
                "--quick: one 4096^3 shape per operation instead of issue 9's eight shapes."})
final class FusedRun extends RankedRun {
    @Option(names = "--no-jmh", description = "skip the JMH step")
    boolean noJmh;

    FusedRun() {
        super(ReportKind.FUSED, "dev.irisjvm.bench.fused.FusedSweep", List.of("--quick"));
    }

    @Override
    List<String> beforeSweep(Path work) {
        return List.of("--traces", work.toString());
    }

    @Override
    String jmhBenchmarks() {
        return noJmh ? null : "^dev\\.irisjvm\\.bench\\.jmh\\.FusedBenchmark\\.";
    }

    @Override
    boolean recordsJmh() {
        return true;
    }

    @Override
    List<String> staleGlobs() {
        return List.of("fused-trace-*.json", "fused-trace-*.json.gz", "fused-trace-*.png", "fused-jmh-*.json");
    }
}

package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code iris-bench ccl}: the collectives sweep against NCCL and the JMH benchmarks, then collectives.md. */
@Command(name = "ccl", mixinStandardHelpOptions = true,
        description = {"The collectives benchmarks on this host's GPUs: the CUDA-event sweep against NCCL (eager and CUDA-graph "
                + "replay), JMH inside every rank, then collectives.md, PNG charts and the raw JSON. "
                + "Sweep options: dev.irisjvm.bench.ccl.CclSweep --help.",
                "--quick: sizes up to 16 MiB and 5 repetitions in the sweep; JMH up to 1 MiB."})
final class CclRun extends BenchRun {
    @Mixin
    RankCount rankCount = new RankCount();

    @Mixin
    JmhOptions jmh = new JmhOptions();

    @Override
    ReportKind kind() {
        return ReportKind.CCL;
    }

    @Override
    String sweepMain() {
        return "dev.irisjvm.bench.ccl.CclSweep";
    }

    @Override
    int ranks() {
        return rankCount.resolve(2);
    }

    @Override
    List<String> quickSweepArgs() {
        return List.of("--max-bytes", "16777216", "--reps", "5");
    }

    @Override
    String jmhBenchmarks() {
        return "^dev\\.irisjvm\\.bench\\.jmh\\.CollectiveBenchmark\\.";
    }

    @Override
    List<String> jmhArgs() {
        return jmh.args(options.quick, "bytes=4096,65536,1048576");
    }
}

package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code iris-bench rma}: the remote-memory-access sweep and JMH benchmarks, then rma.md. */
@Command(name = "rma", mixinStandardHelpOptions = true,
        description = {"The RMA benchmarks on this host's GPUs: the CUDA-event sweep (copy engine, local copies and NCCL "
                + "in the same run), JMH inside every rank, then rma.md, PNG charts and the raw JSON. "
                + "Sweep options: dev.irisjvm.bench.rma.RmaSweep --help.",
                "--quick: sizes up to 16 MiB and 5 repetitions in the sweep; JMH tiles up to 16 MiB."})
final class RmaRun extends BenchRun {
    @Mixin
    RankCount rankCount = new RankCount();

    @Mixin
    JmhOptions jmh = new JmhOptions();

    @Override
    ReportKind kind() {
        return ReportKind.RMA;
    }

    @Override
    String sweepMain() {
        return "dev.irisjvm.bench.rma.RmaSweep";
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
        return "^dev\\.irisjvm\\.bench\\.jmh\\.(BarrierBenchmark|LaunchBenchmark|RemoteTileBenchmark)\\.";
    }

    @Override
    List<String> jmhArgs() {
        return jmh.args(options.quick, "bytes=4096,65536,1048576,16777216");
    }
}

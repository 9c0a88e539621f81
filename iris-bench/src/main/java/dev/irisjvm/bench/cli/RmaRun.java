package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import picocli.CommandLine.Command;

/** {@code iris-bench rma}: the remote-memory-access sweep and JMH benchmarks, then rma.md. */
@Command(name = "rma", mixinStandardHelpOptions = true,
        description = {"The RMA benchmarks on this host's GPUs: the CUDA-event sweep (copy engine, local copies and NCCL "
                + "in the same run), JMH inside every rank, then rma.md, PNG charts and the raw JSON. "
                + "Sweep options: dev.irisjvm.bench.rma.RmaSweep --help.",
                "--quick: sizes up to 16 MiB and 5 repetitions in the sweep; JMH tiles up to 16 MiB."})
final class RmaRun extends SizeSweepRun {
    RmaRun() {
        super(ReportKind.RMA, "dev.irisjvm.bench.rma.RmaSweep",
                "^dev\\.irisjvm\\.bench\\.jmh\\.(BarrierBenchmark|LaunchBenchmark|RemoteTileBenchmark)\\.", "bytes=4096,65536,1048576,16777216");
    }
}

package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import picocli.CommandLine.Command;

/** {@code iris-bench ccl}: the collectives sweep against NCCL and the JMH benchmarks, then collectives.md. */
@Command(name = "ccl", mixinStandardHelpOptions = true,
        description = {"The collectives benchmarks on this host's GPUs: the CUDA-event sweep against NCCL (eager and CUDA-graph "
                + "replay), JMH inside every rank, then collectives.md, PNG charts and the raw JSON. "
                + "Sweep options: dev.irisjvm.bench.ccl.CclSweep --help.",
                "--quick: sizes up to 16 MiB and 5 repetitions in the sweep; JMH up to 1 MiB."})
final class CclRun extends SizeSweepRun {
    CclRun() {
        super(ReportKind.CCL, "dev.irisjvm.bench.ccl.CclSweep",
                "^dev\\.irisjvm\\.bench\\.jmh\\.CollectiveBenchmark\\.", "bytes=4096,65536,1048576");
    }
}

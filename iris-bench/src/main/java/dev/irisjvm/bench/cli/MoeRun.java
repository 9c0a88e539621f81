package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.moe.MoeOptions;
import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code iris-bench moe}: the MoE dispatch / combine sweep against NCCL all-to-all-v, then moe.md. */
@Command(name = "moe", mixinStandardHelpOptions = true,
        description = {"MoE dispatch and combine (MoeDispatch, MoeCombine, MoeLowLatency for small T) against NCCL all-to-all-v "
                + "moving the same rows, on this host's GPUs, one rank per GPU: the CUDA-event sweep over DeepSeek-V3's and "
                + "Mixtral's layers at 128 to 16384 tokens per rank, then moe.md and the raw JSON. "
                + "Sweep options: dev.irisjvm.bench.moe.MoeSweep --help.",
                "--quick: T = 128 and 4096 only, 2 rounds of " + MoeRun.QUICK_REPS + " timed calls."})
final class MoeRun extends RankedRun {
    static final String QUICK_REPS = "" + MoeOptions.MIN_REPS;

    MoeRun() {
        super(ReportKind.MOE, "dev.irisjvm.bench.moe.MoeSweep", List.of("--tokens", "128,4096", "--rounds", "2", "--reps", QUICK_REPS));
    }
}

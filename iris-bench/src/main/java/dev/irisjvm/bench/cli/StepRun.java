package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code iris-bench step}: forward + backward of a tensor-parallel MLP, fused against cuBLAS then NCCL, then training-step.md. */
@Command(name = "step", mixinStandardHelpOptions = true,
        description = {"A training step (forward + backward of a tensor-parallel, sequence-parallel MLP, by default Llama-3 70B's: "
                + "8192 tokens, H 8192, F 28672) with the fused operations (AllGatherGemm, GemmReduceScatter) against the same step "
                + "with cuBLAS then NCCL in sequence, and each part alone, on this host's GPUs, one rank per GPU; then "
                + "training-step.md and the raw JSON. Sweep options: dev.irisjvm.bench.step.StepSweep --help.",
                "--quick: " + StepRun.QUICK_SHAPE + " (M x H x F), 2 rounds."})
final class StepRun extends RankedRun {
    static final String QUICK_SHAPE = "2048x2048x8192";

    StepRun() {
        super(ReportKind.STEP, "dev.irisjvm.bench.step.StepSweep", List.of("--shape", QUICK_SHAPE, "--rounds", "2"));
    }

    /** The command's name, not the report's (training-step). */
    @Override
    String name() {
        return "iris-bench step";
    }
}

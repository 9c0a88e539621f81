package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.report.ReportKind;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code iris-bench jit}: run-time compilation of every example kernel source on one GPU, cold and cached, and jit.md. */
@Command(name = "jit", mixinStandardHelpOptions = true,
        description = {"Run-time compilation (NVRTC) of every example kernel source on one of this host's GPUs: compiles into "
                + "fresh caches, then loads from a filled one, plain and checked; then jit.md (with the device lines each overlap "
                + "style adds, counted from the sources) and the raw JSON. Benchmark options: dev.irisjvm.bench.jit.JitBench --help.",
                "--quick: 3 compiles and 5 loads per source, plain only."})
final class JitRun extends BenchRun {
    @Mixin
    DeviceChoice device = new DeviceChoice();

    JitRun() {
        super(ReportKind.JIT, "dev.irisjvm.bench.jit.JitBench", List.of("--cold-reps", "3", "--warm-reps", "5", "--plain-only"));
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

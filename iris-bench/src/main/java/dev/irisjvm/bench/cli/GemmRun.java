package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.gemm.GemmSuite;
import dev.irisjvm.bench.report.ReportKind;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code iris-bench gemm}: the Iris GEMM against cuBLAS and cuBLASLt on one GPU, timed with CUDA
 * events in rounds, and its report: gemm.md for the headline suite (or shapes given with {@code
 * --shapes}), gemm-suite.md for {@code --suite models}.
 */
@Command(name = "gemm", mixinStandardHelpOptions = true,
        description = {"The GEMM sweep on one of this host's GPUs (Iris against cublasGemmEx and cuBLASLt in the same run, taking "
                + "turns over rounds), then its report, a PNG chart and the raw JSON. Sweep options: "
                + "dev.irisjvm.bench.gemm.GemmSweep --help.",
                "--suite headline (the default): issue 5's seven large shapes; writes gemm.md and gemm-sweep.json.",
                "--suite models: issue 26's suite of 117 shapes (Llama-3 8B, 70B and 405B layers and Mixtral 8x7B experts at TP 1, "
                        + "2, 4 and 8, M from 1 to 16384, both B layouts, plus shapes off the tile grid), 3 warm-up and 20 timed calls "
                        + "per round, 6 rounds; about 20 s of GPU time by estimate, plus each shape's setup and check: a few minutes. "
                        + "Writes gemm-suite.md (ratios per shape grouped by model and layer, the geometric mean, the worst shapes, "
                        + "each shape's roofline) and gemm-suite.json.",
                "--quick: 4096^3 in both layouts and 1024 x 8192 x 8192 only, 20 timed calls each (headline only).",
                "cuBLAS: libcublas.so.13 and libcublasLt.so.13 must be loadable (in a bundle, source env.sh first)."})
final class GemmRun extends BenchRun {
    @Mixin
    DeviceChoice device = new DeviceChoice();

    @Option(names = "--suite", paramLabel = "NAME", converter = SuiteConverter.class,
            description = "headline (default; gemm.md) or models (issue 26, gemm-suite.md); see above")
    GemmSuite suite;

    /** picocli converter: a suite by name. */
    static final class SuiteConverter implements picocli.CommandLine.ITypeConverter<GemmSuite> {
        @Override
        public GemmSuite convert(String value) {
            return GemmSuite.of(value);
        }
    }

    GemmRun() {
        super(ReportKind.GEMM, "dev.irisjvm.bench.gemm.GemmSweep",
                List.of("--shapes", "4096x4096x4096:nk,4096x4096x4096:kn,1024x8192x8192:nk", "--reps", "20"));
    }

    /** gemm-suite for the models suite, else gemm. */
    @Override
    ReportKind kind() {
        return suite == GemmSuite.MODELS ? ReportKind.GEMM_SUITE : ReportKind.GEMM;
    }

    @Override
    String name() {
        return "iris-bench gemm";
    }

    @Override
    int ranks() {
        device.validate();
        if (options.quick && suite == GemmSuite.MODELS) {
            throw new IllegalArgumentException("--quick runs three headline shapes; it does not go with --suite models");
        }
        return 0;
    }

    /** The models suite goes to the sweep; headline is its default (and leaves room for --quick's --shapes). */
    @Override
    List<String> beforeSweep(Path work) {
        return suite == GemmSuite.MODELS ? List.of("--suite", suite.id()) : List.of();
    }

    @Override
    Map<String, String> sweepEnvironment() {
        return device.environment();
    }
}

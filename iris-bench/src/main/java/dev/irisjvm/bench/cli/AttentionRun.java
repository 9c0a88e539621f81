package dev.irisjvm.bench.cli;

import dev.irisjvm.bench.attention.AttentionBenchOptions;
import dev.irisjvm.bench.report.ReportKind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code iris-bench attention}: PyTorch SDPA on one GPU, then the attention benchmark in every rank, then attention.md. */
@Command(name = "attention", mixinStandardHelpOptions = true,
        description = {"The attention benchmarks on this host's GPUs: PyTorch SDPA on one GPU (attention_sdpa.py, python3 with "
                + "torch), then one JVM per rank (the local kernel, ring attention against NCCL all-gather + local kernel, "
                + "flash-decode fused against partial + NCCL all-gather + combine), then attention.md, PNG charts and the raw "
                + "JSON. Benchmark options: dev.irisjvm.bench.attention.AttentionBench --help.",
                "--quick: S 4K local, 32K ring, 32K and 128K decode, fewer repetitions."})
final class AttentionRun extends BenchRun {
    static final String SDPA_SCRIPT = "iris-bench/src/main/python/attention_sdpa.py";

    @Option(names = "-n", paramLabel = "N",
            description = "ranks, one per GPU (default: 2, or 1 where nvidia-smi lists fewer; ring and flash-decode need 2)")
    Integer ranks;

    @Option(names = "--no-sdpa", description = "skip PyTorch SDPA (the local target is then not judged)")
    boolean noSdpa;

    AttentionRun() {
        super(ReportKind.ATTENTION, "dev.irisjvm.bench.attention.AttentionBench", List.of("--local-seqs", "4096", "--ring-seqs",
                "32768", "--decode-lens", "32768,131072", "--reps", "5", "--decode-reps", "20"));
    }

    @Override
    int ranks() {
        if (ranks != null) {
            if (ranks < 1 || ranks > RankCount.NODE_GPUS) {
                throw new IllegalArgumentException("-n must be 1 to " + RankCount.NODE_GPUS + ", got " + ranks);
            }
            return ranks;
        }
        int gpus;
        try {
            gpus = RankCount.gpus();
        } catch (IllegalArgumentException noNvidiaSmi) {
            gpus = 2;
        }
        return gpus >= 2 ? 2 : 1;
    }

    /**
     * attention_sdpa.py's shape options: the local part's, read by the sweep's own options from the
     * arguments it will get (--quick's, then those given; a later one wins here, the sweep itself
     * says what it accepts).
     */
    List<String> sdpaShape() {
        List<String> args = new ArrayList<>(options.quick ? quickSweepArgs() : List.of());
        args.addAll(options.sweepArgs);
        AttentionBenchOptions sweep = new AttentionBenchOptions();
        new CommandLine(sweep).setOverwrittenOptionsAllowed(true).setUnmatchedArgumentsAllowed(true).parseArgs(args.toArray(String[]::new));
        return sweep.sdpaShape();
    }

    /** PyTorch SDPA on one GPU, before the ranks take the GPUs; its JSON goes to the benchmark as --sdpa. */
    @Override
    List<String> beforeSweep(Path work) throws java.io.IOException, InterruptedException {
        if (noSdpa) {
            return List.of();
        }
        Path script = home.script(SDPA_SCRIPT);
        if (script == null) {
            System.err.println(name() + ": no " + SDPA_SCRIPT + "; SDPA not measured");
            return List.of();
        }
        Path json = work.resolve("attention-sdpa.json");
        List<String> sdpa = new ArrayList<>(List.of("python3", script.toString(), "--out", json.toString()));
        sdpa.addAll(sdpaShape());
        sdpa.addAll(List.of("--device", System.getenv().getOrDefault("IRIS_DEVICE", "0")));
        int rc;
        try {
            rc = Processes.run(sdpa, Map.of("PYTHONUNBUFFERED", "1"));
        } catch (java.io.IOException noPython) {
            System.err.println(name() + ": no python3; SDPA not measured");
            return List.of();
        }
        if (rc != 0) {
            System.err.println(name() + ": attention_sdpa.py failed; the report will not judge the local target");
            return List.of();
        }
        return List.of("--sdpa", json.toString());
    }
}

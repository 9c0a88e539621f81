package dev.irisjvm.bench.jit;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.report.Stats;
import dev.irisjvm.bench.results.JitBenchResult;
import dev.irisjvm.bench.results.JitBenchResult.FirstCompile;
import dev.irisjvm.bench.results.JitBenchResult.SourceTimes;
import dev.irisjvm.core.CompiledModule;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.core.internal.Nvrtc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * What run-time compilation costs the examples: for every example kernel source
 * ({@link ExampleSource#NAMES}), plain and checked, {@code --cold-reps} compiles each into a fresh
 * cache folder (nothing reused: the shipped headers are unpacked into it, timed apart, then NVRTC
 * compiles and the cubin is written), then {@code --warm-reps} loads from the last of those caches
 * (the compiler answers from its cache, timed; the cubin is loaded into the GPU and every kernel of
 * the source looked up, so that lazy loading defers nothing, timed apart). One GPU, one JVM; the
 * process's first compile (NVRTC loaded, the headers read for the first time) is made and recorded
 * before any timed one.
 *
 * <pre>
 * mvn -q package -DskipTests
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.jit.JitBench --out jit-bench.json
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.jit.JitBench --sources 10_overlap_styles.cu --plain-only
 * </pre>
 *
 * <p>Times are wall-clock milliseconds on the calling thread ({@link System#nanoTime()}). Exit code:
 * 0, 2 for bad options, 1 when a source does not compile or a warm load was not a cache hit.
 */
@Command(name = "JitBench", mixinStandardHelpOptions = true,
        description = "Run-time compilation of the example kernel sources: cold compiles into fresh caches, loads from a warm one.")
public final class JitBench extends SweepCommand {
    @Mixin
    JitOptions options = new JitOptions();

    public static void main(String[] args) {
        main(new JitBench(), args);
    }

    @Override
    public Integer call() throws Exception {
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        int gpu = IrisConfig.fromEnvironment().deviceAmong(Gpu.deviceCount());
        Gpu.setDevice(gpu);
        DeviceProperties device = Gpu.properties(gpu);
        KernelCompiler compiler = KernelCompiler.forCurrentDevice();
        List<ExampleSource> sources = options.sources().stream().map(ExampleSource::onClassPath).toList();
        Files.createDirectories(options.cacheParent());
        // Before anything else loads NVRTC: this compile is what a program's first kernel costs.
        FirstCompile first = firstCompile(compiler, sources.get(0));
        String nvrtc = nvrtcVersion(Nvrtc.version());
        System.out.println(name() + ": " + RunRecord.device(device) + ", " + compiler.architecture() + ", NVRTC " + nvrtc + " ("
                + Nvrtc.library() + "), " + sources.size() + " source(s), caches in " + options.cacheParent()
                + String.format(Locale.ROOT, "; first compile %.1f ms", first.ms()));
        List<SourceTimes> times = new ArrayList<>();
        for (ExampleSource source : sources) {
            for (boolean checked : options.variants()) {
                SourceTimes t = measure(compiler.checked(checked), source);
                times.add(t);
                System.out.println(console(t));
            }
        }
        JitBenchResult run = new JitBenchResult(RunRecord.now(), RunRecord.device(device),
                RunRecord.software("NVRTC " + nvrtc), RunRecord.command(0, JitBench.class, spec), compiler.architecture(), nvrtc,
                Nvrtc.library(), Gpu.runtimeDescription(), options.cacheParent().toAbsolutePath().toString(), options.coldReps(),
                options.warmReps(), first, times);
        write(options.out(), run::write, times.size() + " source(s) and variant(s)");
        return 0;
    }

    /** The process's first compile, into a cache of its own: what a program's first kernel costs. */
    private FirstCompile firstCompile(KernelCompiler compiler, ExampleSource source) throws IOException {
        Path cache = Files.createTempDirectory(options.cacheParent(), "iris-jit-first-");
        try {
            long start = System.nanoTime();
            compiler.withCacheDirectory(cache).compile(source.name(), source.text());
            return new FirstCompile(source.name(), millis(System.nanoTime() - start));
        } finally {
            delete(cache);
        }
    }

    /** One source in one variant: the cold compiles, then the warm loads from the last one's cache. */
    private SourceTimes measure(KernelCompiler compiler, ExampleSource source) throws IOException {
        List<Double> unpack = new ArrayList<>();
        List<Double> compile = new ArrayList<>();
        List<Double> hit = new ArrayList<>();
        List<Double> load = new ArrayList<>();
        List<String> kernels = source.kernels();
        Path filled = null;
        try {
            CompiledModule built = null;
            for (int r = 0; r < options.coldReps(); r++) {
                Path cache = Files.createTempDirectory(options.cacheParent(), "iris-jit-cache-");
                KernelCompiler fresh = compiler.withCacheDirectory(cache);
                long start = System.nanoTime();
                fresh.headersDirectory();
                long unpacked = System.nanoTime();
                built = fresh.compile(source.name(), source.text());
                long compiled = System.nanoTime();
                if (built.fromCache()) {
                    throw new IllegalStateException(source.name() + ": a compile into the fresh cache " + cache + " was a cache hit");
                }
                unpack.add(millis(unpacked - start));
                compile.add(millis(compiled - unpacked));
                if (filled != null) {
                    delete(filled);
                }
                filled = cache;
            }
            KernelCompiler warm = compiler.withCacheDirectory(filled);
            for (int r = 0; r < options.warmReps(); r++) {
                long start = System.nanoTime();
                CompiledModule cached = warm.compile(source.name(), source.text());
                long answered = System.nanoTime();
                if (!cached.fromCache()) {
                    throw new IllegalStateException(source.name() + ": the compile after one into " + filled + " was no cache hit");
                }
                byte[] image = cached.image();
                long loadStart = System.nanoTime();
                try (KernelModule module = KernelModule.load(image, source.name())) {
                    kernels.forEach(module::kernel);
                    long loaded = System.nanoTime();
                    hit.add(millis(answered - start));
                    load.add(millis(loaded - loadStart));
                }
            }
            return new SourceTimes(source.name(), source.example(), compiler.isChecked(), source.lines(), source.codeLines(), kernels,
                    built.image().length, shown(warm.nvrtcOptions(), filled), unpack, compile, hit, load);
        } finally {
            if (filled != null) {
                delete(filled);
            }
        }
    }

    /** The options with the run's temporary cache folder written {@code <cache>}, so that runs compare. */
    static List<String> shown(List<String> options, Path cache) {
        String root = cache.toAbsolutePath().toString();
        return options.stream().map(o -> o.replace(root, "<cache>")).toList();
    }

    /** 13010 → "13.1" (NVRTC's 1000 * major + 10 * minor). */
    static String nvrtcVersion(int version) {
        return version / 1000 + "." + version % 1000 / 10;
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private static String console(SourceTimes t) {
        return String.format(Locale.ROOT, "JitBench: %-24s %-7s compile %8.1f ms, cache hit %6.2f ms, module load %6.2f ms (medians)",
                t.source(), t.variant(), median(t.compileMs()), median(t.cacheHitMs()), median(t.moduleLoadMs()));
    }

    private static double median(List<Double> ms) {
        return Stats.median(ms).orElse(Double.NaN);
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}

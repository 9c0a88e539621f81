package dev.irisjvm.bench.gemm;

import dev.irisjvm.bench.RunRecord;
import dev.irisjvm.bench.SharedGpu;
import dev.irisjvm.bench.SweepCommand;
import dev.irisjvm.bench.results.GemmMeasurement;
import dev.irisjvm.bench.results.GemmSweepResult;
import dev.irisjvm.bench.rma.RepTimer;
import dev.irisjvm.bench.rma.RmaKernels;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.bench.rma.TimingStats;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.DeviceProperties;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.KernelLibrary;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmMainloop;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The GEMM sweep: for every shape, the Iris GEMM ({@link Gemm}) and two baselines on the same inputs
 * in the same run, timed with CUDA events: cuBLAS's {@code cublasGemmEx} (F32 compute, default
 * algorithm) and cuBLASLt's {@code cublasLtMatmul} (F32 compute, its heuristic's first algorithm, a
 * {@code --cublaslt-workspace-mib} workspace; see {@link GemmBaselines}). Iris's and cuBLASLt's
 * outputs are each checked once against cuBLAS's ({@link OutputCheck}). One GPU: run it directly or
 * as one rank ({@code IRIS_DEVICE} picks the GPU).
 *
 * <pre>
 * mvn -q install -DskipTests
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --out gemm-sweep.json
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --shapes 4096x4096x4096:nk,4096x4096x4096:kn --rounds 4
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --suite models --out gemm-suite.json
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --portable --shapes 8192x8192x8192:nk  # + iris-portable
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --shapes 8192x8192x8192:km_nk,8192x8192x8192:km_kn
 * </pre>
 *
 * <p>A shape's layouts ({@link GemmShape}) reach all three: {@code km_} stores A K x M, which Iris
 * reads M-major and the baselines take with their A transposed (see {@code CublasGemm}).
 *
 * <p>Method, per shape: inputs uniform in [-1, 1) generated on the GPU, fresh per run; as many
 * input sets (A, B and C each) as it takes for them to hold {@code --l2-factor} times the L2
 * together, the calls rotating through them, so that no call finds its operands in L2 from the call
 * before; {@code --rounds} rounds, in each of which every implementation in turn, in an order that
 * changes every round ({@link RoundOrder}), makes {@code --warmup} untimed calls, then {@code
 * --reps} calls queued behind a gate (a kernel that waits on a host flag, so the host's launch cost
 * is not timed), each between its own pair of CUDA events; the median over all rounds' timed calls
 * counts ({@link RoundTimes}), each round's median is kept. TFLOP/s = 2 M N K / median. Exit code:
 * 0, 2 for bad options, or 3 if an output check failed.
 */
@Command(name = "GemmSweep", mixinStandardHelpOptions = true,
        description = "The Iris GEMM against cuBLAS and cuBLASLt: time per call and TFLOP/s per shape, with CUDA events.")
public final class GemmSweep extends SweepCommand {
    /** Heap beyond the largest shape's buffers: allocator rounding, the gate. */
    static final long HEAP_HEADROOM = 64L << 20;

    @Mixin
    GemmOptions options = new GemmOptions();

    public static void main(String[] args) {
        main(new GemmSweep(), args);
    }

    @Override
    public Integer call() throws Exception {
        if (!valid(options::validate)) {
            return EXIT_USAGE;
        }
        options.settle();
        IrisConfig env = IrisConfig.fromEnvironment();
        int gpu = env.deviceAmong(Gpu.deviceCount());
        Gpu.setDevice(gpu);
        DeviceProperties device = Gpu.properties(gpu);
        long heapBytes = heapBytes(options, device.l2CacheBytes());
        List<GemmMeasurement> results = new ArrayList<>();
        String software;
        long workspaceBytes;
        try (Iris iris = Iris.init(env.withHeapSize(heapBytes)); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library);
             Gemm gemm = Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM));
             Gemm portable = options.portable
                     ? Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM).withMainloop(GemmMainloop.PORTABLE)) : null;
             Gemm tuned = options.tuned ? Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM).withTune(true)) : null) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            long seed = options.seed.orClock();
            Stream stream = iris.stream();
            GemmBaselines baselines = GemmBaselines.open(options, stream);
            software = RunRecord.software(baselines.software());
            workspaceBytes = baselines.cublasLtWorkspaceBytes();
            System.out.println("GemmSweep: " + gemm + ", " + software + ", " + options.shapes().size() + " shape(s)"
                    + (options.suiteName() == null ? "" : " (suite " + options.suiteName() + ")") + ", " + options.inputType() + " -> "
                    + options.outputType()
                    + ", L2 " + SizeList.format(device.l2CacheBytes()) + ", " + options.rounds() + " round(s), seed " + seed);
            Map<String, Gemm> variants = variants(gemm, tuned, portable);
            try (RepTimer timer = new RepTimer(iris, kernels, stream, options.gate())) {
                List<GemmShape> shapes = options.shapes();
                for (int index = 0; index < shapes.size(); index++) {
                    long start = System.nanoTime();
                    results.addAll(runShape(iris, variants, baselines, timer, shapes.get(index), seed + 1000L * index, device));
                    System.out.printf(Locale.ROOT, "GemmSweep: %s (%d of %d) done in %.1f s%n", shapes.get(index), index + 1, shapes.size(),
                            (System.nanoTime() - start) / 1e9);
                }
            } finally {
                iris.synchronize();
                baselines.close();
            }
        }
        GemmSweepResult sweep = new GemmSweepResult(RunRecord.now(), hardware(device),
                software, RunRecord.command(0, GemmSweep.class, spec), device.l2CacheBytes(), options.l2Factor, options.warmup(),
                options.groupM, results, options.rounds(), workspaceBytes, options.suiteName(), options.origins());
        System.out.print(console(results));
        write(options.out(), sweep::write, results.size() + " measurements");
        return checked(results.stream().filter(GemmMeasurement::checkFailed).count(), "output(s) failed the check (Iris's or cuBLASLt's)");
    }

    /**
     * One shape: every implementation timed on the same rotating inputs, round by round in {@link
     * RoundOrder}, then the output checks.
     */
    /** The library's GEMMs this run times, by implementation name: the default one, and those --tuned and --portable add. */
    private static Map<String, Gemm> variants(Gemm gemm, Gemm tuned, Gemm portable) {
        Map<String, Gemm> v = new LinkedHashMap<>();
        v.put(GemmMeasurement.IRIS, gemm);
        if (tuned != null) {
            v.put(GemmMeasurement.IRIS_TUNED, tuned);
        }
        if (portable != null) {
            v.put(GemmMeasurement.IRIS_PORTABLE, portable);
        }
        return v;
    }

    private List<GemmMeasurement> runShape(Iris iris, Map<String, Gemm> variants, GemmBaselines baselines, RepTimer timer, GemmShape s,
                                           long seed, DeviceProperties device) {
        SymmetricHeap heap = iris.heap();
        Stream stream = iris.stream();
        DType in = options.inputType();
        DType out = options.outputType();
        int sets = options.sets(s, device.l2CacheBytes());
        List<SymTensor> tensors = new ArrayList<>();
        try {
            SymTensor[] a = new SymTensor[sets];
            SymTensor[] b = new SymTensor[sets];
            SymTensor[] c = new SymTensor[sets];
            for (int i = 0; i < sets; i++) {
                a[i] = track(tensors, heap.uniform(seed + 3L * i, -1, 1, in, s.aRows(), s.aCols()));
                b[i] = track(tensors, heap.uniform(seed + 3L * i + 1, -1, 1, in, s.bRows(), s.bCols()));
                c[i] = track(tensors, heap.empty(out, s.m(), s.n()));
            }
            SymTensor reference = track(tensors, heap.empty(out, s.m(), s.n()));
            // Each implementation's call on input set i, into C of that set.
            Map<String, IntConsumer> calls = new LinkedHashMap<>();
            variants.forEach((impl, gemm) -> calls.put(impl, i -> gemm.matmul(a[i], b[i], s.layouts(), c[i], 1f, 0f, stream)));
            if (baselines.cublas() != null) {
                calls.put(GemmMeasurement.CUBLAS, i -> baselines.cublas().gemm(s.layouts(), in, out, s.m(), s.n(), s.k(),
                        a[i].deviceAddress(), b[i].deviceAddress(), c[i].deviceAddress(), false));
            }
            if (baselines.cublasLt() != null) {
                calls.put(GemmMeasurement.CUBLASLT, i -> baselines.cublasLt().gemm(s.layouts(), in, out, s.m(), s.n(), s.k(),
                        a[i].deviceAddress(), b[i].deviceAddress(), c[i].deviceAddress(), false));
            }
            Map<String, RoundTimes> times = new LinkedHashMap<>();
            calls.keySet().forEach(impl -> times.put(impl, new RoundTimes()));
            for (int round = 0; round < options.rounds(); round++) {
                for (String impl : RoundOrder.of(List.copyOf(calls.keySet()), round)) {
                    IntConsumer call = calls.get(impl);
                    times.get(impl).add(timer.run(options.warmup(), options.reps(), r -> {}, r -> call.accept(r % sets), true));
                }
            }
            Map<String, String> checks = checks(iris, calls, baselines, s, a[0], b[0], c[0], reference);
            List<GemmMeasurement> points = new ArrayList<>();
            for (Map.Entry<String, RoundTimes> e : times.entrySet()) {
                Gemm variant = variants.get(e.getKey());
                String algorithm = variant != null ? variant.schedule(s.m(), s.n(), s.k())
                        : GemmMeasurement.CUBLASLT.equals(e.getKey()) ? baselines.cublasLt().algorithm(s.layouts(), in, out, s.m(), s.n(), s.k()).text()
                        : null;
                points.add(point(s, e.getKey(), e.getValue(), sets, checks.get(e.getKey()), algorithm));
            }
            return points;
        } finally {
            iris.synchronize();
            for (int i = tensors.size() - 1; i >= 0; i--) {
                tensors.get(i).close();
            }
        }
    }

    /**
     * The output checks, on input set 0 once more: cuBLAS's output (into {@code reference}) is the
     * reference; every other implementation writes into {@code c0}, poisoned before each call, and
     * is compared with it. Without cuBLAS nothing is checked.
     */
    private Map<String, String> checks(Iris iris, Map<String, IntConsumer> calls, GemmBaselines baselines, GemmShape s, SymTensor a0,
                                       SymTensor b0, SymTensor c0, SymTensor reference) {
        Map<String, String> checks = new LinkedHashMap<>();
        if (baselines.cublas() == null) {
            calls.keySet().forEach(impl -> checks.put(impl, "not checked (no cuBLAS: " + baselines.cublasReason() + ")"));
            return checks;
        }
        Stream stream = iris.stream();
        DType out = options.outputType();
        Memcpy.memset(reference.deviceAddress(), 0xFF, reference.byteSize(), stream);
        baselines.cublas().gemm(s.layouts(), options.inputType(), out, s.m(), s.n(), s.k(), a0.deviceAddress(), b0.deviceAddress(),
                reference.deviceAddress(), false);
        iris.synchronize();
        ByteBuffer theirs = download(reference);
        for (Map.Entry<String, IntConsumer> e : calls.entrySet()) {
            if (GemmMeasurement.CUBLAS.equals(e.getKey())) {
                checks.put(e.getKey(), GemmMeasurement.REFERENCE);
                continue;
            }
            Memcpy.memset(c0.deviceAddress(), 0xFF, c0.byteSize(), stream);
            e.getValue().accept(0);
            iris.synchronize();
            checks.put(e.getKey(), OutputCheck.compare(download(c0), theirs, out, (long) s.m() * s.n(), s.k()));
        }
        return checks;
    }

    private static SymTensor track(List<SymTensor> tensors, SymTensor t) {
        tensors.add(t);
        return t;
    }

    private GemmMeasurement point(GemmShape s, String impl, RoundTimes times, int sets, String check, String algorithm) {
        TimingStats t = times.all();
        double tflops = t.medianUs() > 0 ? s.flops() / (t.medianUs() * 1e6) : 0;
        return new GemmMeasurement(s.id(), s.m(), s.n(), s.k(), s.layouts().kernelPart(),
                options.inputType().name().toLowerCase(Locale.ROOT), options.outputType().name().toLowerCase(Locale.ROOT), impl,
                t.reps(), sets, t.medianUs(), t.minUs(), t.maxUs(), tflops, check, times.roundMediansUs(), algorithm);
    }

    private static ByteBuffer download(SymTensor t) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(t.byteSize())).order(ByteOrder.nativeOrder());
        t.copyTo(b);
        return b.flip();
    }

    /** Heap for the largest shape: its input sets and outputs, plus the check's reference output. */
    static long heapBytes(GemmOptions options, long l2Bytes) {
        long most = 0;
        int in = options.inputType().byteSize();
        int out = options.outputType().byteSize();
        for (GemmShape s : options.shapes()) {
            long c = align((long) s.m() * s.n() * out);
            long set = align((long) s.m() * s.k() * in) + align(s.bRows() * s.bCols() * in) + c;
            most = Math.max(most, options.sets(s, l2Bytes) * set + c);
        }
        long bytes = most + HEAP_HEADROOM;
        return (bytes + (1L << 20) - 1) >> 20 << 20;
    }

    private static long align(long bytes) {
        return (bytes + 255) / 256 * 256;
    }

    /** "NVIDIA H200 (132 SMs, 140 GiB, CC 9.0, L2 60 MiB)". */
    static String hardware(DeviceProperties p) {
        return p.name() + " (" + p.multiprocessorCount() + " SMs, " + SizeList.format(p.totalGlobalMemory()) + ", CC "
                + p.computeCapability() + ", L2 " + SizeList.format(p.l2CacheBytes()) + ")";
    }

    /** A console table (with --tuned and --portable, rows for those too): shape, Iris's and both baselines' TFLOP/s, the strongest baseline and the ratio to it, the checks. */
    static String console(List<GemmMeasurement> results) {
        String format = "%-22s %10s %11s %13s %-9s %8s  %s%n";
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, format, "shape", "iris TF/s", "cublas TF/s", "cublaslt TF/s",
                "baseline", "ratio", "check"));
        for (GemmMeasurement m : results) {
            if (!m.impl().startsWith(GemmMeasurement.IRIS)) {
                continue;
            }
            GemmMeasurement cublas = find(results, m.shape(), GemmMeasurement.CUBLAS);
            GemmMeasurement lt = find(results, m.shape(), GemmMeasurement.CUBLASLT);
            GemmMeasurement best = GemmMeasurement.strongest(cublas, lt);
            sb.append(String.format(Locale.ROOT, format, m.shape() + (GemmMeasurement.IRIS.equals(m.impl()) ? "" : " " + m.impl().substring(GemmMeasurement.IRIS.length() + 1)), tflops(m), tflops(cublas), tflops(lt),
                    best == null ? "—" : best.impl(), best == null ? "—" : String.format(Locale.ROOT, "%.3f", m.tflops() / best.tflops()),
                    m.check() + (lt == null || GemmMeasurement.OK.equals(lt.check()) ? "" : "; cublaslt: " + lt.check())));
        }
        return sb.toString();
    }

    private static GemmMeasurement find(List<GemmMeasurement> results, String shape, String impl) {
        return results.stream().filter(r -> impl.equals(r.impl()) && r.shape().equals(shape)).findFirst().orElse(null);
    }

    private static String tflops(GemmMeasurement m) {
        return m == null ? "—" : String.format(Locale.ROOT, "%.1f", m.tflops());
    }
}

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
import dev.irisjvm.kernels.gemm.CublasGemm;
import dev.irisjvm.kernels.gemm.Gemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The GEMM sweep: for every shape, the Iris GEMM ({@link Gemm}) and cuBLAS ({@code cublasGemmEx},
 * F32 compute, default algorithm) on the same inputs in the same run, timed with CUDA events; the
 * Iris output is checked once against cuBLAS's ({@link OutputCheck}). One GPU: run it directly or
 * as one rank ({@code IRIS_DEVICE} picks the GPU).
 *
 * <pre>
 * mvn -q install -DskipTests
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --out gemm-sweep.json
 * java -cp 'iris-bench/target/lib/*' dev.irisjvm.bench.gemm.GemmSweep --shapes 4096x4096x4096:nk,4096x4096x4096:kn --reps 50
 * </pre>
 *
 * <p>Method, per shape and implementation: inputs uniform in [-1, 1) generated on the GPU, fresh
 * per run; as many input sets (A, B and C each) as it takes for them to hold {@code --l2-factor}
 * times the L2 together, the calls rotating through them, so that no call finds its operands in L2
 * from the call before; {@code --warmup} untimed calls, then {@code --reps} calls queued behind a
 * gate (a kernel that waits on a host flag, so the host's launch cost is not timed), each between
 * its own pair of CUDA events; the median per call counts. TFLOP/s = 2 M N K / median. Exit code:
 * 0, 2 for bad options, or 3 if an output check failed.
 */
@Command(name = "GemmSweep", mixinStandardHelpOptions = true,
        description = "The Iris GEMM against cuBLAS: time per call and TFLOP/s per shape, with CUDA events.")
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
        IrisConfig env = IrisConfig.fromEnvironment();
        int gpu = env.deviceAmong(Gpu.deviceCount());
        Gpu.setDevice(gpu);
        DeviceProperties device = Gpu.properties(gpu);
        long heapBytes = heapBytes(options, device.l2CacheBytes());
        List<GemmMeasurement> results = new ArrayList<>();
        String software;
        try (Iris iris = Iris.init(env.withHeapSize(heapBytes)); KernelLibrary library = KernelLibrary.forClasspath();
             RmaKernels kernels = new RmaKernels(iris, library);
             Gemm gemm = Gemm.create(Gemm.Options.defaults().withGroupM(options.groupM()))) {
            if (SharedGpu.refuses(iris, name())) {
                return SharedGpu.EXIT_SHARED_GPU;
            }
            long seed = options.seed() != null ? options.seed() : System.nanoTime();
            options.seed = seed;
            Stream stream = iris.stream();
            CublasGemm cublas = null;
            String cublasReason = "--no-cublas";
            if (options.cublas()) {
                try {
                    cublas = CublasGemm.open(stream);
                } catch (RuntimeException | LinkageError e) {
                    cublasReason = String.valueOf(e.getMessage());
                    System.err.println("GemmSweep: cuBLAS unavailable, timing Iris alone: " + cublasReason);
                }
            }
            software = RunRecord.software(cublas != null ? cublas.version() : "cuBLAS not used (" + cublasReason + ")");
            System.out.println("GemmSweep: " + gemm + ", " + software + ", " + options.inputType() + " -> " + options.outputType()
                    + ", L2 " + SizeList.format(device.l2CacheBytes()) + ", seed " + seed);
            try (RepTimer timer = new RepTimer(iris, kernels, stream, options.gate())) {
                int index = 0;
                for (GemmShape shape : options.shapes()) {
                    long start = System.nanoTime();
                    results.addAll(runShape(iris, gemm, cublas, cublasReason, timer, shape, seed + 1000L * index++, device));
                    System.out.printf(Locale.ROOT, "GemmSweep: %s done in %.1f s%n", shape, (System.nanoTime() - start) / 1e9);
                }
            } finally {
                iris.synchronize();
                if (cublas != null) {
                    cublas.close();
                }
            }
        }
        GemmSweepResult sweep = new GemmSweepResult(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), hardware(device),
                software, RunRecord.command(0, GemmSweep.class, spec), device.l2CacheBytes(), options.l2Factor(), options.warmup(), options.groupM(), results);
        RunRecord.write(options.out(), sweep::write);
        System.out.print(console(results));
        System.out.println("GemmSweep: " + results.size() + " measurements written to " + options.out().toAbsolutePath());
        return checked(results.stream().filter(m -> GemmMeasurement.IRIS.equals(m.impl()) && failedCheck(m.check())).count(),
                "shape(s) failed the output check");
    }

    static boolean failedCheck(String check) {
        return !GemmMeasurement.OK.equals(check) && !check.startsWith("not checked");
    }

    /** One shape: both implementations timed on the same rotating inputs, then the output check. */
    private List<GemmMeasurement> runShape(Iris iris, Gemm gemm, CublasGemm cublas, String cublasReason, RepTimer timer,
                                           GemmShape s, long seed, DeviceProperties device) {
        SymmetricHeap heap = iris.heap();
        Stream stream = iris.stream();
        DType in = options.inputType();
        DType out = options.outputType();
        int sets = options.sets(s, device.l2CacheBytes());
        List<SymTensor> tensors = new ArrayList<>();
        List<GemmMeasurement> points = new ArrayList<>();
        try {
            SymTensor[] a = new SymTensor[sets];
            SymTensor[] b = new SymTensor[sets];
            SymTensor[] c = new SymTensor[sets];
            for (int i = 0; i < sets; i++) {
                a[i] = track(tensors, heap.uniform(seed + 3L * i, -1, 1, in, s.m(), s.k()));
                b[i] = track(tensors, heap.uniform(seed + 3L * i + 1, -1, 1, in, s.bRows(), s.bCols()));
                c[i] = track(tensors, heap.empty(out, s.m(), s.n()));
            }
            SymTensor reference = track(tensors, heap.empty(out, s.m(), s.n()));
            float[] irisMs = timer.run(options.warmup(), options.reps(), r -> {},
                    r -> gemm.matmul(a[r % sets], b[r % sets], s.layout(), c[r % sets], stream), true);
            float[] cublasMs = cublas == null ? null : timer.run(options.warmup(), options.reps(), r -> {},
                    r -> cublas.gemm(s.layout(), in, out, s.m(), s.n(), s.k(), a[r % sets].deviceAddress(), b[r % sets].deviceAddress(),
                            c[r % sets].deviceAddress(), false), true);

            // The check: set 0 once more, both implementations into poisoned outputs.
            String check;
            if (cublas == null) {
                check = "not checked (no cuBLAS: " + cublasReason + ")";
            } else {
                Memcpy.memset(c[0].deviceAddress(), 0xFF, c[0].byteSize(), stream);
                Memcpy.memset(reference.deviceAddress(), 0xFF, reference.byteSize(), stream);
                gemm.matmul(a[0], b[0], s.layout(), c[0], stream);
                cublas.gemm(s.layout(), in, out, s.m(), s.n(), s.k(), a[0].deviceAddress(), b[0].deviceAddress(), reference.deviceAddress(),
                        false);
                iris.synchronize();
                check = OutputCheck.compare(download(c[0]), download(reference), out, (long) s.m() * s.n(), s.k());
            }
            points.add(point(s, GemmMeasurement.IRIS, irisMs, sets, check));
            if (cublasMs != null) {
                points.add(point(s, GemmMeasurement.CUBLAS, cublasMs, sets, GemmMeasurement.REFERENCE));
            }
            return points;
        } finally {
            iris.synchronize();
            for (int i = tensors.size() - 1; i >= 0; i--) {
                tensors.get(i).close();
            }
        }
    }

    private static SymTensor track(List<SymTensor> tensors, SymTensor t) {
        tensors.add(t);
        return t;
    }

    private GemmMeasurement point(GemmShape s, String impl, float[] ms, int sets, String check) {
        TimingStats t = TimingStats.ofMillis(ms, 1);
        double tflops = t.medianUs() > 0 ? s.flops() / (t.medianUs() * 1e6) : 0;
        return new GemmMeasurement(s.id(), s.m(), s.n(), s.k(), s.layout().kernelSuffix(),
                options.inputType().name().toLowerCase(Locale.ROOT), options.outputType().name().toLowerCase(Locale.ROOT), impl,
                t.reps(), sets, t.medianUs(), t.minUs(), t.maxUs(), tflops, check);
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

    /** A console table: shape, both medians and TFLOP/s, the ratio, the check. */
    static String console(List<GemmMeasurement> results) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-22s %12s %10s %12s %10s %8s  %s%n", "shape", "iris µs",
                "iris TF/s", "cublas µs", "cublas TF/s", "ratio", "check"));
        for (GemmMeasurement m : results) {
            if (!GemmMeasurement.IRIS.equals(m.impl())) {
                continue;
            }
            GemmMeasurement ref = results.stream().filter(r -> GemmMeasurement.CUBLAS.equals(r.impl()) && r.shape().equals(m.shape()))
                    .findFirst().orElse(null);
            sb.append(String.format(Locale.ROOT, "%-22s %12.1f %10.1f %12s %10s %8s  %s%n", m.shape(), m.medianUs(), m.tflops(),
                    ref == null ? "—" : String.format(Locale.ROOT, "%.1f", ref.medianUs()),
                    ref == null ? "—" : String.format(Locale.ROOT, "%.1f", ref.tflops()),
                    ref == null || ref.tflops() <= 0 ? "—" : String.format(Locale.ROOT, "%.3f", m.tflops() / ref.tflops()), m.check()));
        }
        return sb.toString();
    }
}

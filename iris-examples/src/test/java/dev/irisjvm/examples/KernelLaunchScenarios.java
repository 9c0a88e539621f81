package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisConfig;
import dev.irisjvm.core.KernelCompileException;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.core.testing.ScenarioRunner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * User kernels through the public API on every rank of a real job, with this GPU's compiler
 * ({@code KernelCompiler.forIris}, the host's NVRTC): a source that does not compile raises its log
 * with the line, a launch whose arguments do not fit the kernel's parameters (size, count) raises
 * {@link IllegalArgumentException} naming the kernel and the argument before anything runs, a struct
 * argument arrives whole wherever it was packed, and a launch that fits runs. Run by
 * {@link ExamplesGpuTest} through the launcher. The kernels write at most 16 elements.
 */
public final class KernelLaunchScenarios {
    public static final List<String> SCENARIOS = List.of("compile_error_raises_its_line", "launch_checks_argument_size",
            "launch_checks_argument_count", "struct_argument_arrives_whole", "fitting_launch_runs");

    static final String SOURCE = """
            #include <iris/iris.cuh>
            extern "C" __global__ void copy_prefix(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* in, float* out,
                                                   uint64_t n) {
                const uint64_t count = n < 16 ? n : 16;
                for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) out[i] = in[i] + float(ctx.rank);
            }
            extern "C" __global__ void takes_float4(int tag, float4 v, float* out) {
                if (threadIdx.x == 0) {
                    out[0] = v.x + tag; out[1] = v.y + tag; out[2] = v.z + tag; out[3] = v.w + tag;
                }
            }
            """;
    /** The line of SOURCE that {@link #compileError} breaks. */
    static final int BROKEN_LINE = 5;

    private static final int N = 16;

    private final Iris iris;
    private final KernelCompiler compiler;
    private final DeviceModule module;
    private final Random random;

    private KernelLaunchScenarios(Iris iris) {
        this.iris = iris;
        this.compiler = KernelCompiler.forIris(iris);
        this.module = compiler.compile("launch_checks.cu", SOURCE).load();
        this.random = new Random(System.nanoTime() ^ 31L * iris.rank());
    }

    public static void main(String[] args) {
        IrisConfig config = IrisConfig.fromEnvironment().withHeapSize(64L << 20).withDeviceTimeout(Duration.ofSeconds(10));
        int failed;
        try (Iris iris = Iris.init(config)) {
            KernelLaunchScenarios s = new KernelLaunchScenarios(iris);
            Map<String, ScenarioRunner.Scenario> table = new LinkedHashMap<>();
            table.put("compile_error_raises_its_line", s::compileError);
            table.put("launch_checks_argument_size", s::argumentSize);
            table.put("launch_checks_argument_count", s::argumentCount);
            table.put("struct_argument_arrives_whole", s::structArrivesWhole);
            table.put("fitting_launch_runs", s::fittingLaunch);
            failed = ScenarioRunner.runTable(table, SCENARIOS, iris::hostBarrier);
            s.module.close();
        }
        System.exit(failed);
    }

    /** An undeclared name on line {@value #BROKEN_LINE}: the exception carries NVRTC's log, which names that line. */
    private void compileError() {
        String broken = SOURCE.replace("out[i] = in[i]", "out[i] = undeclared_thing + in[i]");
        Failures f = new Failures();
        try {
            compiler.compile("broken.cu", broken);
            f.fail("broken.cu compiled");
        } catch (KernelCompileException e) {
            String line = "broken.cu(" + BROKEN_LINE + ")";
            f.check(e.log().contains(line) && e.log().contains("undeclared_thing"), () -> "the log does not name " + line
                    + " and the identifier: " + e.log());
            f.check(e.getMessage().startsWith("rank " + iris.rank() + ": broken.cu does not compile for "
                    + compiler.architecture()) && e.getMessage().contains(line), () -> "message: " + e.getMessage());
            f.check(e.sourceName().equals("broken.cu") && e.architecture().equals(compiler.architecture()),
                    () -> "source " + e.sourceName() + ", architecture " + e.architecture());
        }
        f.throwIfAny();
    }

    /** An Integer where the kernel takes uint64_t n (argument 3): 4 bytes where the parameter has 8. */
    private void argumentSize() {
        try (SymTensor in = iris.heap().empty(DType.F32, N); SymTensor out = iris.heap().full(Float.NaN, DType.F32, N)) {
            expectRefused("copy_prefix", "argument 3: the launch passes 4 byte(s), the kernel's parameter 3 has 8",
                    LaunchShape.of(1, 32), iris.deviceContext(), in, out, N);
        }
    }

    /** n left out: three arguments for four parameters. */
    private void argumentCount() {
        try (SymTensor in = iris.heap().empty(DType.F32, N); SymTensor out = iris.heap().full(Float.NaN, DType.F32, N)) {
            expectRefused("copy_prefix", "the launch passes 3 argument(s)", LaunchShape.of(1, 32), iris.deviceContext(),
                    in, out);
        }
    }

    /**
     * A float4 (16-byte aligned: the kernel's parameter 1 is at byte 16) passed as a byte[] struct,
     * which packs 8-byte aligned at byte 8: the launch hands the driver a pointer to each argument, so
     * the value arrives whole.
     */
    private void structArrivesWhole() {
        float[] v = {1 + random.nextFloat(), 2 + random.nextFloat(), 3 + random.nextFloat(), 4 + random.nextFloat()};
        ByteBuffer packed = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
        for (float x : v) {
            packed.putFloat(x);
        }
        try (SymTensor out = iris.heap().full(Float.NaN, DType.F32, 4)) {
            module.launch("takes_float4", LaunchShape.of(1, 32), iris.stream(), 7, packed.array(), out);
            iris.synchronize();
            float[] expected = new float[4];
            for (int i = 0; i < 4; i++) {
                expected[i] = (float) ((double) v[i] + 7);
            }
            float[] got = out.toFloatArray();
            if (!Arrays.equals(got, expected)) {
                throw new AssertionError("takes_float4 wrote " + Arrays.toString(got) + ", expected " + Arrays.toString(expected));
            }
        }
    }

    /** The same kernel with the arguments it declares: out = in + rank, exactly. */
    private void fittingLaunch() {
        float[] values = new float[N];
        for (int i = 0; i < N; i++) {
            values[i] = 1 + random.nextFloat();
        }
        try (SymTensor in = iris.heap().empty(DType.F32, N); SymTensor out = iris.heap().full(Float.NaN, DType.F32, N)) {
            in.copyFrom(values);
            module.launch("copy_prefix", LaunchShape.of(1, 32), iris.stream(), iris.deviceContext(), in, out, (long) N);
            iris.synchronize();
            float[] expected = new float[N];
            for (int i = 0; i < N; i++) {
                expected[i] = (float) ((double) values[i] + iris.rank());
            }
            float[] got = out.toFloatArray();
            if (!Arrays.equals(got, expected)) {
                throw new AssertionError("copy_prefix wrote " + Arrays.toString(got) + ", expected " + Arrays.toString(expected));
            }
        }
    }

    /** The launch must throw IllegalArgumentException naming the rank, the kernel and {@code problem}. */
    private void expectRefused(String kernel, String problem, LaunchShape shape, Object... args) {
        try {
            module.launch(kernel, shape, iris.stream(), args);
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            String names = "rank " + iris.rank() + ": kernel '" + kernel + "'";
            if (!m.startsWith(names) || !m.contains(problem)) {
                throw new AssertionError("the launch was refused, but the message does not start '" + names + "' and say '"
                        + problem + "': " + m, e);
            }
            iris.synchronize();  // nothing ran: no error recorded
            return;
        }
        iris.synchronize();
        throw new AssertionError("a launch of " + kernel + " with arguments " + Arrays.toString(args) + " was not refused");
    }
}

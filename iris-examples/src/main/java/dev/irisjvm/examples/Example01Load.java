package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 01 load: a kernel of your own ({@code 01_load.cu}, compiled at run time) in which each rank reads
 * the next rank's buffer element by element with {@code iris::load}; each rank checks that it got
 * the next rank's random values exactly.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example01Load
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 loaded 1000003 values from rank 1: OK} and
 * {@code [1] rank 1 loaded 1000003 values from rank 0: OK}.
 */
public final class Example01Load {
    private static final int N = 1_000_003;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int next = (iris.rank() + 1) % iris.worldSize();
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example01Load.class, "01_load.cu").load();
                 SymTensor buffer = iris.heap().empty(DType.F32, N);
                 SymTensor out = iris.heap().full(Float.NaN, DType.F32, N)) {
                buffer.copyFrom(Examples.randomFloats(seed, iris.rank(), N));
                iris.barrier();  // every rank's buffer is written before any rank reads it

                // load_from_peer(iris::Ctx ctx, const float* buffer, float* out, uint64_t n)
                kernels.launch("load_from_peer", LaunchShape.of(128, 256), iris.stream(), iris.deviceContext(), buffer,
                        out, buffer.numel());
                iris.barrier();  // no rank frees its buffer while a peer still reads it
                iris.synchronize();

                double[] expected = Examples.doubles(Examples.randomFloats(seed, next, N));
                Examples.expectEqual(iris, "out", out.toFloatArray(), expected);
                Examples.ok(iris, "loaded " + N + " values from rank " + next);
            }
        }
    }
}

package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 02 store: each rank writes its random values into the next rank's buffer with
 * {@code iris::store} ({@code 02_store.cu}); the receiving rank runs nothing for it, and after a
 * device barrier checks that its buffer holds the previous rank's values exactly.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example02Store
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 received 1000003 values stored by rank 1: OK} and
 * {@code [1] rank 1 received 1000003 values stored by rank 0: OK}.
 */
public final class Example02Store {
    private static final int N = 1_000_003;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int previous = (iris.rank() + iris.worldSize() - 1) % iris.worldSize();
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example02Store.class, "02_store.cu").load();
                 SymTensor values = iris.heap().empty(DType.F32, N);
                 SymTensor buffer = iris.heap().full(Float.NaN, DType.F32, N)) {
                values.copyFrom(Examples.randomFloats(seed, iris.rank(), N));
                iris.barrier();  // every buffer is poisoned before a peer stores into it

                // store_to_peer(iris::Ctx ctx, const float* values, float* buffer, uint64_t n)
                kernels.launch("store_to_peer", LaunchShape.of(128, 256), iris.stream(), iris.deviceContext(), values,
                        buffer, values.numel());
                iris.barrier();  // the previous rank's stores are visible here after this
                iris.synchronize();

                double[] expected = Examples.doubles(Examples.randomFloats(seed, previous, N));
                Examples.expectEqual(iris, "buffer", buffer.toFloatArray(), expected);
                Examples.ok(iris, "received " + N + " values stored by rank " + previous);
            }
        }
    }
}

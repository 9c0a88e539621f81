package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 03 get, put, copy: block-cooperative transfers ({@code 03_get_put_copy.cu}), each block moving
 * its slice. Every rank gets the previous rank's source, puts its own source into the next rank,
 * and copies the previous rank's source into the next rank (a third party moving data between two
 * peers). So each rank ends up with the previous rank's source in {@code got} and {@code putInto},
 * and the source of the rank two before it in {@code copiedInto} (its own on two ranks).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example03GetPutCopy
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 got and was put 100003 values of rank 1, was copied those of rank 0: OK} and
 * {@code [1] rank 1 got and was put 100003 values of rank 0, was copied those of rank 1: OK}.
 */
public final class Example03GetPutCopy {
    private static final int N = 100_003;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int world = iris.worldSize();
            int previous = (iris.rank() + world - 1) % world;
            int twoBefore = (iris.rank() + world - 2) % world;
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example03GetPutCopy.class, "03_get_put_copy.cu").load();
                 SymTensor src = iris.heap().empty(DType.F32, N);
                 SymTensor got = iris.heap().full(Float.NaN, DType.F32, N);
                 SymTensor putInto = iris.heap().full(Float.NaN, DType.F32, N);
                 SymTensor copiedInto = iris.heap().full(Float.NaN, DType.F32, N)) {
                src.copyFrom(Examples.randomFloats(seed, iris.rank(), N));
                iris.barrier();  // every source written and every output poisoned before any transfer

                // get_put_copy(iris::Ctx ctx, const float* src, float* got, float* put_into, float* copied_into,
                //              uint64_t n)
                kernels.launch("get_put_copy", LaunchShape.of(16, 256), iris.stream(), iris.deviceContext(), src, got,
                        putInto, copiedInto, src.numel());
                iris.barrier();  // the peers' puts and copies are visible here after this
                iris.synchronize();

                double[] fromPrevious = Examples.doubles(Examples.randomFloats(seed, previous, N));
                Examples.expectEqual(iris, "got", got.toFloatArray(), fromPrevious);
                Examples.expectEqual(iris, "putInto", putInto.toFloatArray(), fromPrevious);
                Examples.expectEqual(iris, "copiedInto", copiedInto.toFloatArray(),
                        Examples.doubles(Examples.randomFloats(seed, twoBefore, N)));
                Examples.ok(iris, "got and was put " + N + " values of rank " + previous + ", was copied those of rank "
                        + twoBefore);
            }
        }
    }
}

package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 04 atomics ({@code 04_atomics.cu}): every thread of every rank adds one into rank 0's counters
 * ({@code iris::atomic_add}, thread t into slot t mod SLOTS), and each rank takes the maximum of its
 * rank into every rank's {@code highest} ({@code iris::atomic_max}, release order, system scope).
 * The counters start at random values; rank 0 checks that each grew by exactly the adds it was
 * due, the other ranks that theirs did not change, and every rank that its {@code highest} is the
 * last rank.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example04Atomics
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 counted 16384 adds from 2 ranks in 1000 counters, highest rank 1: OK} and
 * {@code [1] rank 1 kept its counters, highest rank 1: OK}.
 */
public final class Example04Atomics {
    private static final int SLOTS = 1000;
    private static final LaunchShape SHAPE = LaunchShape.of(32, 256);

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int world = iris.worldSize();
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example04Atomics.class, "04_atomics.cu").load();
                 SymTensor counters = iris.heap().empty(DType.I64, SLOTS);
                 SymTensor highest = iris.heap().full(Integer.MIN_VALUE, DType.I32, 1)) {
                long[] start = Examples.randomLongs(seed, iris.rank(), SLOTS);
                counters.copyFrom(start);
                iris.barrier();  // rank 0's counters and every highest are set before any rank adds

                // atomics(iris::Ctx ctx, uint64_t* counters, int* highest, uint64_t slots)
                kernels.launch("atomics", SHAPE, iris.stream(), iris.deviceContext(), counters, highest, (long) SLOTS);
                iris.barrier();  // every rank's atomics have landed after this
                iris.synchronize();

                long[] expected = start.clone();
                long threads = (long) SHAPE.gridX() * SHAPE.blockX();
                if (iris.rank() == 0) {
                    for (int s = 0; s < SLOTS; s++) {
                        expected[s] += world * (threads / SLOTS + (s < threads % SLOTS ? 1 : 0));
                    }
                }
                Examples.expectEqual(iris, "counters", counters.toLongArray(), expected);
                Examples.expectEqual(iris, "highest", new long[] {highest.toIntArray()[0]}, new long[] {world - 1});
                String counted = "counted " + threads * world + " adds from " + world + " ranks in " + SLOTS + " counters";
                Examples.ok(iris, (iris.rank() == 0 ? counted : "kept its counters") + ", highest rank " + (world - 1));
            }
        }
    }
}

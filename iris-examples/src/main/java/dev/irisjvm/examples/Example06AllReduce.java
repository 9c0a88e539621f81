package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 06 all-reduce written by hand ({@code 06_all_reduce.cu}): every rank sums every rank's input into
 * its own output, reading the peers' inputs straight from their heaps, 16 bytes per load, with a
 * tail that does not fill 16 bytes. A device barrier before the kernel (every input written) and
 * after it (no input freed while a peer reads it). Each rank starts the sum at its own input, so
 * the float sums differ in rounding from rank to rank: the check is against the exact sum, within
 * the bound of w - 1 float additions, gamma(w - 1) times the sum of magnitudes.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example06AllReduce
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 summed 262147 values of 2 ranks: OK} and {@code [1] rank 1 summed 262147 values of 2 ranks: OK}.
 */
public final class Example06AllReduce {
    private static final int N = 4 * 65536 + 3;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int world = iris.worldSize();
            long seed = Examples.runSeed(iris);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example06AllReduce.class, "06_all_reduce.cu").load();
                 SymTensor input = iris.heap().empty(DType.F32, N);
                 SymTensor output = iris.heap().full(Float.NaN, DType.F32, N)) {
                input.copyFrom(Examples.randomFloats(seed, iris.rank(), N));
                iris.barrier();  // every rank's input is written before any rank reads it

                // all_reduce_sum(iris::Ctx ctx, const float* input, float* output, uint64_t n)
                kernels.launch("all_reduce_sum", LaunchShape.of(132, 256), iris.stream(), iris.deviceContext(), input,
                        output, input.numel());
                iris.barrier();  // no rank frees its input while a peer still reads it
                iris.synchronize();

                double[] sum = new double[N];
                double[] magnitudes = new double[N];
                for (int r = 0; r < world; r++) {
                    float[] theirs = Examples.randomFloats(seed, r, N);
                    for (int i = 0; i < N; i++) {
                        sum[i] += theirs[i];
                        magnitudes[i] += Math.abs(theirs[i]);
                    }
                }
                double u = 0x1p-24;  // float's unit roundoff
                // w - 1 float additions, and the reference's own double rounding.
                double gamma = (world - 1) * u / (1 - (world - 1) * u) + world * 0x1p-53;
                double[] bound = new double[N];
                for (int i = 0; i < N; i++) {
                    bound[i] = gamma * magnitudes[i];
                }
                Examples.expectWithin(iris, "output", output.toFloatArray(), sum, bound);
                Examples.ok(iris, "summed " + N + " values of " + world + " ranks");
            }
        }
    }
}

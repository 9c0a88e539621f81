package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import java.util.Arrays;

/**
 * 05 message passing ({@code 05_message_passing.cu}): rank 0's {@code producer} puts a message
 * straight into rank 1's inbox and then raises rank 1's flag to the round's sequence number with
 * release order; rank 1's {@code consumer} waits for the flag with acquire order and doubles what
 * arrived. The flag is never reset: round k waits for a value of at least k. The two kernels run
 * on different ranks and need no order between them: the consumer may start first (ranks that
 * share a GPU take turns on it) and its wait is bounded, so a message that never comes is raised
 * by {@code synchronize()} after the device timeout instead of hanging. Ranks from 2 on only join
 * the barriers.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example05MessagePassing
 * </pre>
 * Expected output, among the log lines:
 * {@code [0] rank 0 sent 3 messages of 4099 values to rank 1: OK} and
 * {@code [1] rank 1 received 3 messages of 4099 values from rank 0, each after its flag: OK}.
 */
public final class Example05MessagePassing {
    private static final int N = 4099;
    private static final int ROUNDS = 3;
    /** One block each: put is block-cooperative, and the consumer's wait is one thread's. */
    private static final LaunchShape ONE_BLOCK = LaunchShape.of(1, 256);

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            long seed = Examples.runSeed(iris);
            float[] poison = new float[N];
            Arrays.fill(poison, Float.NaN);
            try (DeviceModule kernels = KernelCompiler.forIris(iris)
                         .compileResource(Example05MessagePassing.class, "05_message_passing.cu").load();
                 SymTensor message = iris.heap().empty(DType.F32, N);
                 SymTensor inbox = iris.heap().full(Float.NaN, DType.F32, N);
                 SymTensor received = iris.heap().empty(DType.F32, N);
                 SymTensor flag = iris.heap().zeros(DType.I64, 1)) {
                iris.barrier();  // rank 1's flag is zero and its inbox poisoned before rank 0 sends
                for (int round = 1; round <= ROUNDS; round++) {
                    float[] sent = Examples.randomFloats(seed + round, 0, N);
                    if (iris.rank() == 0) {
                        message.copyFrom(sent);
                        // producer(iris::Ctx ctx, const float* message, float* inbox, uint64_t* flag,
                        //          uint64_t n, uint64_t sequence)
                        kernels.launch("producer", ONE_BLOCK, iris.stream(), iris.deviceContext(), message, inbox, flag,
                                message.numel(), (long) round);
                    } else if (iris.rank() == 1) {
                        received.copyFrom(poison);
                        // consumer(iris::Ctx ctx, const float* inbox, float* received, const uint64_t* flag,
                        //          uint64_t n, uint64_t sequence)
                        kernels.launch("consumer", ONE_BLOCK, iris.stream(), iris.deviceContext(), inbox, received, flag,
                                received.numel(), (long) round);
                    }
                    iris.synchronize();  // rank 1: a flag that never came up is raised here, naming rank 0
                    if (iris.rank() == 1) {
                        double[] expected = Examples.doubles(sent);
                        for (int i = 0; i < N; i++) {
                            expected[i] *= 2;
                        }
                        Examples.expectEqual(iris, "received (round " + round + ")", received.toFloatArray(), expected);
                    }
                    iris.barrier();  // rank 1 is done with the inbox before rank 0 sends the next round into it
                }
                iris.synchronize();
                Examples.ok(iris, switch (iris.rank()) {
                    case 0 -> "sent " + ROUNDS + " messages of " + N + " values to rank 1";
                    case 1 -> "received " + ROUNDS + " messages of " + N + " values from rank 0, each after its flag";
                    default -> "joined the barriers while rank 0 sent to rank 1";
                });
            }
        }
    }
}

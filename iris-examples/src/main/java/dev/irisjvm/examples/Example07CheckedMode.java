package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisDeviceException;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;

/**
 * 07 checked mode ({@code 07_checked_mode.cu}): a kernel compiled with {@code checked(true)}
 * ({@code -DIRIS_CHECKED=1}; {@code IRIS_CHECK=1} does the same for {@code KernelCompiler.forIris})
 * stores into the next rank's heap at an address 4 KiB past its end. The translation catches it:
 * nothing is stored, the thread stops, and the next {@code synchronize()} raises an
 * {@link IrisDeviceException} (code 5) naming the rank, the kernel, its source line, the target rank
 * and the offset. The instance works on afterwards.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example07CheckedMode
 * </pre>
 * Expected output, among the log lines, for each rank (rank 0 shown, with the default heap of 1 GiB):
 * <pre>
 * [0] rank 0: checked mode: out_of_heap (07_checked_mode.cu:13) translated an address for target rank 1: offset
 *     1073745920 lies outside the heap of 1073741824 bytes; the thread that made the call stopped and ...
 * [0] rank 0 caught the store past the end of rank 1's heap: OK
 * </pre>
 */
public final class Example07CheckedMode {
    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int rank = iris.rank();
            int peer = (rank + 1) % iris.worldSize();
            long heapSize = iris.config().heapSize();
            try (DeviceModule kernels = KernelCompiler.forIris(iris).checked(true)
                         .compileResource(Example07CheckedMode.class, "07_checked_mode.cu").load();
                 SymTensor buffer = iris.heap().zeros(DType.F32, 1024);
                 SymTensor storeLine = iris.heap().zeros(DType.I32, 1)) {
                // In elements from buffer: 4 KiB past the end of the heap.
                long pastEnd = (heapSize - buffer.heapOffset()) / Float.BYTES + 1024;
                long offset = buffer.heapOffset() + pastEnd * Float.BYTES;

                // out_of_heap(iris::Ctx ctx, float* buffer, uint64_t past_end, int* store_line)
                kernels.launch("out_of_heap", LaunchShape.of(1, 32), iris.stream(), iris.deviceContext(), buffer,
                        pastEnd, storeLine);
                IrisDeviceException caught = null;
                try {
                    iris.synchronize();
                } catch (IrisDeviceException e) {
                    caught = e;
                }
                if (caught == null) {
                    throw new IllegalStateException("rank " + rank + ": the store at offset " + offset + " of rank "
                            + peer + "'s heap went unreported");
                }
                String message = String.valueOf(caught.getMessage());
                String names = "rank " + rank + ": checked mode: out_of_heap (07_checked_mode.cu:" + storeLine.toIntArray()[0] + ")";
                String problem = "translated an address for target rank " + peer + ": offset " + offset
                        + " lies outside the heap of " + heapSize + " bytes";
                boolean named = message.startsWith(names) && message.contains(problem);
                if (caught.code() != 5 || caught.peer() != peer || !named) {
                    throw new IllegalStateException("rank " + rank + ": expected code 5, peer " + peer + " and a message"
                            + " that starts '" + names + "' and says '" + problem + "', got code " + caught.code()
                            + ", peer " + caught.peer() + ": " + message, caught);
                }
                System.out.println(message);

                iris.barrier();  // the error was raised once and cleared: the instance works on
                iris.synchronize();
                Examples.ok(iris, "caught the store past the end of rank " + peer + "'s heap");
            }
        }
    }
}

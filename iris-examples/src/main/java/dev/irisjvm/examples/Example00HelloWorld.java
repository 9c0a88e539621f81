package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;

/**
 * Iris's hello world on the JVM: every rank allocates the same symmetric buffer, rank 0 writes
 * into rank 1's copy with a one-sided store (rank 1 runs nothing for it), the ranks meet at a
 * device barrier, and rank 1 checks what arrived.
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example00HelloWorld
 * </pre>
 * Expected output, among the log lines: {@code [1] rank 1 received 0, 1, 2, ... 4095 from rank 0: OK}.
 */
public final class Example00HelloWorld {
    private static final int N = 4096;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            SymTensor buffer = iris.heap().zeros(DType.I32, N);
            SymTensor message = iris.heap().arange(DType.I32, N);
            iris.barrier();  // rank 1's buffer is zeroed before rank 0 writes it

            if (iris.rank() == 0) {
                buffer.whole().on(1).storeRemote(message.whole());
            }
            iris.barrier();  // rank 0's store is visible to rank 1 after this
            iris.synchronize();

            if (iris.rank() == 1) {
                int[] received = buffer.toIntArray();
                for (int i = 0; i < N; i++) {
                    if (received[i] != i) {
                        throw new IllegalStateException("rank 1: element " + i + " is " + received[i] + ", expected " + i);
                    }
                }
                System.out.println("rank 1 received " + received[0] + ", " + received[1] + ", " + received[2] + ", ... "
                        + received[N - 1] + " from rank 0: OK");
            }
            message.close();
            buffer.close();
        }
    }
}

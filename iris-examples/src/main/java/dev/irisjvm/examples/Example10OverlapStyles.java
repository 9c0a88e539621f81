package dev.irisjvm.examples;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Event;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.gemm.Gemm;

/**
 * 10 GEMM + all-scatter in the Iris paper's other three overlap styles ({@code 10_overlap_styles.cu};
 * 08 is the fourth, fused sequential), each a few lines of device code on the library's GEMM
 * building blocks, on {@link AllScatterProblem}'s column-parallel layer:
 * <ul>
 *   <li><b>bulk-synchronous</b>: the plain GEMM, then a scatter kernel on the same stream;</li>
 *   <li><b>producer–consumer</b>: the GEMM counts each finished tile in a flag; a scatter kernel on a
 *       second stream, on {@value #SENDER_SMS} SMs the GEMM's grid leaves free, sends each tile once
 *       it is counted;</li>
 *   <li><b>workgroup-specialized</b>: one kernel whose CTAs take tickets as they start, the first
 *       ones running the GEMM and the last {@value #SENDER_SMS} sending.</li>
 * </ul>
 * Each style runs twice (the flags and tickets only grow: a call waits for counts of its own), with
 * C poisoned before and checked after each call against a double-precision reference. Needs an
 * H100 or H200 (sm_90a).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example10OverlapStyles
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 gathered C in the bulk-synchronous, producer-consumer and workgroup-specialized styles, twice each (333 x 528 x 200): OK}.
 */
public final class Example10OverlapStyles {
    /** SMs the GEMM leaves to the senders in the two styles that overlap. */
    static final int SENDER_SMS = 4;
    private static final int SENDER_THREADS = 256;
    private static final int CALLS = 2;

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            int sms = iris.deviceProperties().multiprocessorCount();
            try (DeviceModule kernels = Examples.hopperCompiler(iris).compileResource(Example10OverlapStyles.class,
                         "10_overlap_styles.cu").load();
                 AllScatterProblem p = new AllScatterProblem(iris, Examples.runSeed(iris));
                 SymTensor counted = iris.heap().zeros(DType.I64, p.gemm().tiles());
                 SymTensor countedTogether = iris.heap().zeros(DType.I64, p.gemm().tiles());
                 SymTensor tickets = iris.heap().zeros(DType.I32, 1);
                 Stream senders = Stream.create();
                 Event ready = Event.untimed();
                 Event sent = Event.untimed()) {
                for (String kernel : new String[] {"gemm", "gemm_counting", "gemm_and_scatter"}) {
                    kernels.setMaxDynamicSharedBytes(kernel, Gemm.SHARED_BYTES);
                }
                LaunchShape gemmBeside = p.gemm().launchShape(sms - SENDER_SMS);
                for (long call = 1; call <= CALLS; call++) {
                    p.poison();
                    kernels.launch("gemm", p.gemm().launchShape(), iris.stream(), p.gemm());
                    kernels.launch("scatter", LaunchShape.of(sms, SENDER_THREADS), iris.stream(), iris.deviceContext(), p.gemm());
                    iris.barrier();  // publishes every rank's stores into this rank's C
                    p.check("C, bulk-synchronous, call " + call);

                    p.poison();
                    ready.record(iris.stream());  // C poisoned everywhere before the senders start
                    senders.waitFor(ready);
                    kernels.launch("gemm_counting", gemmBeside, iris.stream(), iris.deviceContext(), p.gemm(), counted);
                    kernels.launch("scatter_when_counted", LaunchShape.of(SENDER_SMS, SENDER_THREADS), senders,
                            iris.deviceContext(), p.gemm(), counted, call);
                    sent.record(senders);
                    iris.stream().waitFor(sent);
                    iris.barrier();
                    p.check("C, producer-consumer, call " + call);

                    p.poison();
                    int gemmCtas = gemmBeside.gridX();
                    LaunchShape together = new LaunchShape(gemmCtas + SENDER_SMS, 1, 1, Gemm.THREADS, 1, 1, Gemm.SHARED_BYTES);
                    kernels.launch("gemm_and_scatter", together, iris.stream(), iris.deviceContext(), p.gemm(), countedTogether,
                            tickets, call, gemmCtas);
                    iris.barrier();
                    p.check("C, workgroup-specialized, call " + call);
                }
                Examples.ok(iris, "gathered C in the bulk-synchronous, producer-consumer and workgroup-specialized styles, "
                        + "twice each (" + p + ")");
            }
        }
    }
}

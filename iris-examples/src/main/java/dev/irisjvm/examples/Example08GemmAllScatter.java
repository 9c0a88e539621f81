package dev.irisjvm.examples;

import dev.irisjvm.core.DeviceModule;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.KernelCompiler;
import dev.irisjvm.kernels.gemm.Gemm;
import dev.irisjvm.kernels.gemm.GemmErrorBound;
import dev.irisjvm.kernels.gemm.GemmKernelArgs;

/**
 * 08 GEMM + all-scatter of your own ({@code 08_gemm_all_scatter.cu}): the library's GEMM building
 * blocks ({@code #include <iris/gemm.cuh>}) with an epilogue that stores every finished piece of C
 * into every rank's copy: the Iris paper's fused sequential overlap style (example 10 has the other
 * three). The problem ({@link AllScatterProblem}) is a column-parallel layer: every rank holds the
 * same A and its own shard of the weight, B_r, computes its columns of C and ends with all of them.
 * {@link GemmKernelArgs} builds the kernel's argument (the TMA descriptors of A and B_r, and this
 * rank's column block of the symmetric C as the output). C is poisoned with NaN first and checked
 * element by element against a double-precision reference within the GEMM's error bound
 * ({@link GemmErrorBound}). Needs an H100 or H200 (sm_90a: wgmma and TMA).
 *
 * <pre>
 * mvn -q package -DskipTests
 * bin/iris-run -n 2 -- java -cp 'iris-examples/target/lib/*' dev.irisjvm.examples.Example08GemmAllScatter
 * </pre>
 * Expected output, among the log lines, one line per rank:
 * {@code [0] rank 0 computed 264 of 528 columns and received the rest (333 x 528 x 200): OK} and the same for rank 1.
 */
public final class Example08GemmAllScatter {
    private static final String KERNEL = "gemm_all_scatter";

    public static void main(String[] args) {
        try (Iris iris = Iris.init()) {
            Examples.requireTwoRanks(iris);
            KernelCompiler compiler = Examples.hopperCompiler(iris);
            try (DeviceModule kernels = compiler.compileResource(Example08GemmAllScatter.class, "08_gemm_all_scatter.cu")
                         .load();
                 AllScatterProblem p = new AllScatterProblem(iris, Examples.runSeed(iris))) {
                kernels.setMaxDynamicSharedBytes(KERNEL, Gemm.SHARED_BYTES);
                p.poison();
                // gemm_all_scatter(iris::Ctx ctx, iris_gemm_args args)
                kernels.launch(KERNEL, p.gemm().launchShape(), iris.stream(), iris.deviceContext(), p.gemm());
                iris.barrier();  // publishes every rank's stores into this rank's C
                p.check("C");
                Examples.ok(iris, "computed " + AllScatterProblem.N_LOCAL + " of " + p.columns()
                        + " columns and received the rest (" + p + ")");
            }
        }
    }
}

/**
 * Numbered examples, from one operation up. They export nothing to applications: run them by name,
 * on the class path or the module path. iris-bench alone reads them: it times the training step's
 * kernels and counts the overlap styles of the kernel sources.
 *
 * <pre>{@code
 * bin/iris-run -n 2 -- java -p iris-examples/target/lib --add-modules ALL-MODULE-PATH \
 *     -m dev.irisjvm.examples/dev.irisjvm.examples.Example00HelloWorld
 * }</pre>
 */
module dev.irisjvm.examples {
    requires dev.irisjvm.kernels;
    requires org.bytedeco.javacpp;
    requires org.bytedeco.cuda;  // Example09CublasInterop: cuBLAS and the CUDA runtime through JavaCPP

    exports dev.irisjvm.examples to dev.irisjvm.bench;

    // The kernel sources beside the examples, which iris-core's KernelCompiler reads, and iris-bench.
    opens dev.irisjvm.examples to dev.irisjvm.core, dev.irisjvm.bench;
}

/**
 * Numbered examples, from one operation up. They export nothing: run them by name, on the class
 * path or the module path.
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

    // The kernel sources beside the examples, which iris-core's KernelCompiler reads.
    opens dev.irisjvm.examples to dev.irisjvm.core;
}

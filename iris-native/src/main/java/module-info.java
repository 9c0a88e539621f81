/**
 * The JavaCPP binding of {@code iris_runtime.h} and the native runtime's resources: private
 * plumbing, reached only through iris-core. Its generated packages are exported to iris-core alone (the kernel interface's to iris-kernels too);
 * the native libraries travel in the {@code linux-x86_64} jar (module
 * {@code dev.irisjvm.runtime.linux.x86_64}), as JavaCPP's own platform jars do.
 */
module dev.irisjvm.runtime {
    requires transitive org.bytedeco.javacpp;

    exports dev.irisjvm.runtime to dev.irisjvm.core;
    exports dev.irisjvm.runtime.global to dev.irisjvm.core;
    // The kernel interface (iris/abi/*.h): the context for iris-core, each family's struct for its kernels
    // (iris-bench's for the RMA benchmark kernels).
    exports dev.irisjvm.runtime.abi to dev.irisjvm.core, dev.irisjvm.kernels, dev.irisjvm.bench;
    exports dev.irisjvm.runtime.abi.global to dev.irisjvm.core, dev.irisjvm.kernels, dev.irisjvm.bench;

    // The core kernels' fatbins, which iris-core's KernelModule reads.
    opens dev.irisjvm.runtime.kernels to dev.irisjvm.core;
    // The device API headers, for users who compile kernels against them.
    opens dev.irisjvm.runtime.include.iris;
    opens dev.irisjvm.runtime.include.iris.impl;
    opens dev.irisjvm.runtime.include.iris.abi;
}

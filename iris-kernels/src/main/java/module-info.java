/**
 * Iris's kernels: GEMM, collectives, GEMMs fused with communication, attention, and the MoE token
 * exchange, each a Java class over precompiled device code.
 *
 * <pre>{@code
 * try (Iris iris = Iris.init(); Collectives ccl = Collectives.create(iris)) {
 *     ccl.allReduce(in, out, ReduceOp.SUM, iris.stream());
 * }
 * }</pre>
 *
 * The kernel library and its tensor-map cache ({@code dev.irisjvm.kernels}) are not exported; nor
 * are the benchmark kernels ({@code dev.irisjvm.kernels.rma}) or the NCCL communicators under the
 * world collectives ({@code dev.irisjvm.kernels.nccl}).
 */
module dev.irisjvm.kernels {
    requires transitive dev.irisjvm.core;
    requires dev.irisjvm.runtime;
    requires org.bytedeco.javacpp;
    requires org.bytedeco.cuda;  // NCCL's host API, under the world collectives (dev.irisjvm.kernels.nccl)

    exports dev.irisjvm.kernels.attention;
    exports dev.irisjvm.kernels.ccl;
    exports dev.irisjvm.kernels.fused;
    exports dev.irisjvm.kernels.gemm;
    exports dev.irisjvm.kernels.moe;

    // The fatbins beside KernelLibrary, which iris-core's KernelModule reads.
    opens dev.irisjvm.kernels to dev.irisjvm.core;
}

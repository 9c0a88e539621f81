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
 * The kernel library and its tensor-map cache ({@code dev.irisjvm.kernels}), the NCCL communicators
 * under the world collectives ({@code dev.irisjvm.kernels.nccl}) and the vendor baselines the
 * kernels are measured against ({@code dev.irisjvm.kernels.baselines}: cuBLAS, cuBLASLt, NCCL) are
 * exported to iris-bench alone.
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
    // For iris-bench only: the kernel library its sweeps open, the NCCL communicators and the baselines it times.
    exports dev.irisjvm.kernels to dev.irisjvm.bench;
    exports dev.irisjvm.kernels.baselines to dev.irisjvm.bench;
    exports dev.irisjvm.kernels.nccl to dev.irisjvm.bench;

    // The fatbins beside KernelLibrary, which iris-core's KernelModule reads.
    opens dev.irisjvm.kernels to dev.irisjvm.core;
}

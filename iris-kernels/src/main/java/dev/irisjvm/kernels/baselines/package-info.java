/**
 * The vendor libraries the kernels are measured against: cuBLAS and cuBLASLt GEMMs
 * ({@link dev.irisjvm.kernels.baselines.CublasGemm}, {@link dev.irisjvm.kernels.baselines.CublasLtGemm})
 * and NCCL's collectives on plain and window-registered buffers
 * ({@link dev.irisjvm.kernels.baselines.NcclComm}, {@link dev.irisjvm.kernels.baselines.NcclWindows}).
 * The GPU tests compare with them and iris-bench times them. In the main source set, not the tests',
 * so that iris-bench reads them from this module's jar rather than from a test jar that would split
 * this module's packages on the module path; exported to iris-bench alone, not part of the API.
 */
package dev.irisjvm.kernels.baselines;

package dev.irisjvm.bench.gemm;

import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.CublasLtGemm;

/**
 * The GEMM sweep's baselines, each there or not with the reason: cuBLAS's {@code cublasGemmEx}
 * (default algorithm; its output is the reference of every output check) and cuBLASLt with its
 * heuristic's algorithm and a workspace. cuBLASLt runs only beside cuBLAS, so every measured output
 * has a reference.
 *
 * <pre>{@code
 * try (GemmBaselines base = GemmBaselines.open(options, iris.stream())) {
 *     if (base.cublasLt() != null) { ... }
 *     RunRecord.software(base.software());   // "..., cuBLAS 13.1.0, cuBLASLt 13.1.0 (32 MiB workspace), ..."
 * }
 * }</pre>
 */
final class GemmBaselines implements AutoCloseable {
    private final CublasGemm cublas;
    private final String cublasReason;
    private final CublasLtGemm cublasLt;
    private final String cublasLtReason;

    private GemmBaselines(CublasGemm cublas, String cublasReason, CublasLtGemm cublasLt, String cublasLtReason) {
        this.cublas = cublas;
        this.cublasReason = cublasReason;
        this.cublasLt = cublasLt;
        this.cublasLtReason = cublasLtReason;
    }

    /** Opens what the options ask for; what cannot open is left out, with its reason on stderr. */
    static GemmBaselines open(GemmOptions options, Stream stream) {
        if (!options.cublas()) {
            return new GemmBaselines(null, "--no-cublas", null, "--no-cublas");
        }
        CublasGemm cublas;
        try {
            cublas = CublasGemm.open(stream);
        } catch (RuntimeException | LinkageError e) {
            String why = String.valueOf(e.getMessage());
            System.err.println("GemmSweep: cuBLAS unavailable, timing Iris alone: " + why);
            return new GemmBaselines(null, why, null, "no cuBLAS: " + why);
        }
        if (!options.cublasLt()) {
            return new GemmBaselines(cublas, null, null, "--no-cublaslt");
        }
        try {
            return new GemmBaselines(cublas, null, CublasLtGemm.open(stream, options.cublasLtWorkspaceBytes()), null);
        } catch (RuntimeException | LinkageError e) {
            String why = String.valueOf(e.getMessage());
            System.err.println("GemmSweep: cuBLASLt unavailable, cublasGemmEx is the only baseline: " + why);
            return new GemmBaselines(cublas, null, null, why);
        }
    }

    /** cublasGemmEx, or null. */
    CublasGemm cublas() {
        return cublas;
    }

    /** Why there is no cuBLAS, or null. */
    String cublasReason() {
        return cublasReason;
    }

    /** cuBLASLt, or null. */
    CublasLtGemm cublasLt() {
        return cublasLt;
    }

    /** The workspace offered to cuBLASLt, 0 without it. */
    long cublasLtWorkspaceBytes() {
        return cublasLt == null ? 0 : cublasLt.workspaceBytes();
    }

    /** "cuBLAS 13.1.0, cuBLASLt 13.1.0 (32 MiB workspace)", with the reason for what is missing. */
    String software() {
        if (cublas == null) {
            return "cuBLAS not used (" + cublasReason + ")";
        }
        return cublas.version() + ", " + (cublasLt != null ? cublasLt.version() + " (" + (cublasLt.workspaceBytes() >> 20)
                + " MiB workspace)" : "cuBLASLt not used (" + cublasLtReason + ")");
    }

    @Override
    public void close() {
        try {
            if (cublasLt != null) {
                cublasLt.close();
            }
        } finally {
            if (cublas != null) {
                cublas.close();
            }
        }
    }
}

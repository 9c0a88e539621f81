package dev.irisjvm.kernels.baselines;

import java.util.Locale;

/**
 * The algorithm cuBLASLt's heuristic chose for one problem, as its configuration attributes say,
 * for the benchmark report: which kernel family, tile, pipeline, cluster, split of K, and how much
 * of the offered workspace it uses. Names are cuBLASLt's enum names without their prefix, in lower
 * case ({@code CUBLASLT_MATMUL_TILE_128x256} is "128x256").
 *
 * <pre>{@code
 * CublasLtAlgorithm a = lt.algorithm(GemmLayout.NK, DType.BF16, DType.BF16, 4096, 4096, 4096, 4096, 4096, 4096);
 * a.text();   // "algo 66, tile 128x256, stages 64x4, cluster 2x1x1, workspace 0 B, 0.97 waves"
 * }</pre>
 *
 * @param id             {@code CUBLASLT_ALGO_CONFIG_ID}, the kernel family
 * @param tile           {@code CUBLASLT_ALGO_CONFIG_TILE_ID}'s name
 * @param stages         {@code CUBLASLT_ALGO_CONFIG_STAGES_ID}'s name
 * @param cluster        {@code CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID}'s name
 * @param splitK         {@code CUBLASLT_ALGO_CONFIG_SPLITK_NUM}: parts K is split into, 1 for none
 * @param reduction      {@code CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME}'s name: how split-K parts are added
 * @param swizzle        {@code CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING}
 * @param workspaceBytes the workspace the algorithm needs (at most the offered size)
 * @param waves          the heuristic's estimate of waves of thread blocks on the GPU
 */
public record CublasLtAlgorithm(int id, String tile, String stages, String cluster, int splitK, String reduction, int swizzle,
                                long workspaceBytes, float waves) {
    /**
     * Whether K is split and the parts are added up in the output type (the "inplace" and
     * "output_type" schemes), each part rounded to it, rather than in F32 ("compute_type"): such a
     * result is rounded up to {@code splitK} times, not once.
     */
    public boolean reducesInOutputType() {
        return splitK > 1 && (reduction.equals("inplace") || reduction.equals("output_type"));
    }

    /** "algo 66, tile 128x256, stages 64x4, cluster 2x1x1, split-K 2 (compute_type), swizzle 1, workspace 8 MiB, 1.94 waves". */
    public String text() {
        StringBuilder sb = new StringBuilder("algo ").append(id).append(", tile ").append(tile).append(", stages ").append(stages)
                .append(", cluster ").append(cluster);
        if (splitK > 1) {
            sb.append(", split-K ").append(splitK).append(" (").append(reduction).append(')');
        }
        if (swizzle != 0) {
            sb.append(", swizzle ").append(swizzle);
        }
        return sb.append(", workspace ").append(bytes(workspaceBytes)).append(", ")
                .append(String.format(Locale.ROOT, "%.2f", waves)).append(" waves").toString();
    }

    private static String bytes(long b) {
        if (b >= 1 << 20 && b % (1 << 20) == 0) {
            return (b >> 20) + " MiB";
        }
        if (b >= 1 << 10 && b % (1 << 10) == 0) {
            return (b >> 10) + " KiB";
        }
        return b + " B";
    }
}

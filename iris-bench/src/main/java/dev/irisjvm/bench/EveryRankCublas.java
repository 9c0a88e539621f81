package dev.irisjvm.bench;

import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import java.util.function.Consumer;

/**
 * cuBLAS as a baseline opens on every rank or on none: a rank without it would leave the others
 * waiting in the baseline's collectives.
 *
 * <pre>{@code
 * CublasGemm cublas = EveryRankCublas.open(iris, why -> System.out.println("no baseline: " + why));   // null where a rank failed
 * }</pre>
 */
public final class EveryRankCublas {
    private EveryRankCublas() {}

    /**
     * Collective: cuBLAS on this rank, or null on every rank once {@code unavailable} has heard the
     * first rank that could not open it and why ("rank 1: ...").
     */
    public static CublasGemm open(Iris iris, Consumer<String> unavailable) {
        CublasGemm cublas = null;
        String mine = null;
        try {
            cublas = CublasGemm.open(iris.stream());
        } catch (RuntimeException | LinkageError e) {
            mine = String.valueOf(e.getMessage());
        }
        String why = NcclComm.firstReason(iris, mine);
        if (why == null) {
            return cublas;
        }
        if (cublas != null) cublas.close();
        unavailable.accept(why);
        return null;
    }
}

package dev.irisjvm.bench;

import dev.irisjvm.core.Iris;
import dev.irisjvm.kernels.baselines.CublasGemm;
import dev.irisjvm.kernels.baselines.CublasLtGemm;
import dev.irisjvm.kernels.baselines.NcclComm;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * cuBLAS as a baseline opens on every rank or on none: a rank without it would leave the others
 * waiting in the baseline's collectives.
 *
 * <pre>{@code
 * CublasGemm cublas = EveryRankCublas.open(iris, why -> System.out.println("no baseline: " + why));   // null where a rank failed
 * CublasLtGemm lt = EveryRankCublas.openLt(iris, CublasLtGemm.DEFAULT_WORKSPACE_BYTES, why -> System.out.println("no cuBLASLt: " + why));
 * }</pre>
 */
public final class EveryRankCublas {
    private EveryRankCublas() {}

    /**
     * Collective: cuBLAS on this rank, or null on every rank once {@code unavailable} has heard the
     * first rank that could not open it and why ("rank 1: ...").
     */
    public static CublasGemm open(Iris iris, Consumer<String> unavailable) {
        return open(iris, () -> CublasGemm.open(iris.stream()), unavailable);
    }

    /** Collective: cuBLASLt with a workspace of that many bytes on this rank, or null on every rank, as {@link #open}. */
    public static CublasLtGemm openLt(Iris iris, long workspaceBytes, Consumer<String> unavailable) {
        return open(iris, () -> CublasLtGemm.open(iris.stream(), workspaceBytes), unavailable);
    }

    private static <T extends AutoCloseable> T open(Iris iris, Supplier<T> opener, Consumer<String> unavailable) {
        T handle = null;
        String mine = null;
        try {
            handle = opener.get();
        } catch (RuntimeException | LinkageError e) {
            mine = String.valueOf(e.getMessage());
        }
        String why = NcclComm.firstReason(iris, mine);
        if (why == null) {
            return handle;
        }
        if (handle != null) {
            try {
                handle.close();
            } catch (Exception e) {
                why += " (and closing rank " + iris.rank() + "'s handle failed: " + e.getMessage() + ")";
            }
        }
        unavailable.accept(why);
        return null;
    }
}

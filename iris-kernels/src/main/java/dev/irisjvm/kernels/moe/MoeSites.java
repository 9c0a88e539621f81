package dev.irisjvm.kernels.moe;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Wait sites and checks of the MoE kernels (iris/abi/moe.h): a device timeout's message says "wait
 * site N", an MoE check's "check N", and {@link #describe(int)} turns N into the operation and the
 * wait, as {@link dev.irisjvm.kernels.ccl.CclSites} does for the collectives.
 */
public final class MoeSites {
    /** Dispatch, counting kernel's last block: waits for a peer's dispatch to start (its arrive). */
    public static final int ARRIVE = KernelAbi.IRIS_MOE_SITE_ARRIVE;
    /** Dispatch, placing and copying kernels: every block waits for a peer's routes per expert (its row of the count matrix). */
    public static final int COUNTS = KernelAbi.IRIS_MOE_SITE_COUNTS;
    /** Dispatch, copying kernel's last block: waits for a peer's rows to have arrived. */
    public static final int ROWS = KernelAbi.IRIS_MOE_SITE_ROWS;
    /** Combine, sending kernel's last block: waits for a peer's expert outputs to have arrived. */
    public static final int RESULTS = KernelAbi.IRIS_MOE_SITE_RESULTS;
    /** Check (FAIL policy): an expert was routed more rows than its capacity (device error 16). */
    public static final int OVER_CAPACITY = KernelAbi.IRIS_MOE_SITE_OVER_CAPACITY;
    /** Check, both modes: a route named an expert outside [0, experts) (device error 17). */
    public static final int BAD_EXPERT = KernelAbi.IRIS_MOE_SITE_BAD_EXPERT;

    /** Low-latency dispatch ({@link MoeLowLatency}), last block: waits for a source's rows to a local expert (its count and epoch). */
    public static final int LL_ROWS = KernelAbi.IRIS_MOE_SITE_LL_ROWS;
    /** Low-latency combine, reducing kernel: every block waits for a peer's expert outputs to have arrived. */
    public static final int LL_RESULTS = KernelAbi.IRIS_MOE_SITE_LL_RESULTS;
    /** Expert GEMM fed by the dispatch ({@link MoeExpertGemm#dispatchAndGemm}): waits for the rows of a receive-buffer tile. */
    public static final int TILE_ROWS = KernelAbi.IRIS_MOE_SITE_TILE_ROWS;

    /** Device error codes of the checks (IrisDeviceException.code()). */
    public static final int ERROR_OVER_CAPACITY = KernelAbi.IRIS_MOE_ERROR_CODE_OVER_CAPACITY;
    public static final int ERROR_BAD_EXPERT = KernelAbi.IRIS_MOE_ERROR_CODE_BAD_EXPERT;

    private MoeSites() {}

    /** E.g. "MoE dispatch: waiting for a peer's routes per expert", or null for a site that is not the MoE kernels'. */
    public static String describe(int site) {
        if (site == ARRIVE) return "MoE dispatch: waiting for a peer to start the same dispatch (its arrive)";
        if (site == COUNTS) return "MoE dispatch: waiting for a peer's routes per expert (its row of the count matrix)";
        if (site == ROWS) return "MoE dispatch: waiting for a peer's token rows to arrive";
        if (site == RESULTS) return "MoE combine: waiting for a peer's expert outputs to arrive";
        if (site == OVER_CAPACITY) {
            return "MoE dispatch: an expert was routed more rows than its capacity (FAIL policy; device error "
                    + ERROR_OVER_CAPACITY + ")";
        }
        if (site == LL_ROWS) return "MoE low-latency dispatch: waiting for a source's rows to a local expert (its count and epoch)";
        if (site == LL_RESULTS) return "MoE low-latency combine: waiting for a peer's expert outputs to arrive";
        if (site == TILE_ROWS) return "MoE expert GEMM fed by the dispatch: waiting for the rows of a receive-buffer tile to arrive";
        if (site == BAD_EXPERT) return "MoE dispatch: a route named an expert id out of range (device error " + ERROR_BAD_EXPERT + ")";
        return null;
    }
}

package dev.irisjvm.kernels.fused;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * Wait sites and launch checks of the fused GEMM + communication kernels (iris/abi/fused.h): a
 * device timeout's message says "wait site N", a refused launch's "launch check N", and {@link
 * #describe(int)} turns N into the operation and the wait or check, as {@link
 * dev.irisjvm.kernels.ccl.CclSites} does for the collectives.
 */
public final class FusedSites {
    /** GEMM + all-reduce / reduce-scatter: a tile's owner waits for a peer's partial of that tile. */
    public static final int PARTIAL_FLAG = KernelAbi.IRIS_FUSED_SITE_PARTIAL_FLAG;
    /** All-gather + GEMM: the producer waits until a peer has pushed the piece of its rows of A that the next loads read. */
    public static final int GATHERED_ROWS = KernelAbi.IRIS_FUSED_SITE_GATHERED_ROWS;
    /** Spare-warp variants: the spare warps wait for the consumers to hand over a finished tile (same GPU). */
    public static final int HANDOFF = KernelAbi.IRIS_FUSED_SITE_HANDOFF;
    /** All-gather + GEMM: the spare warps wait until a peer's call has started before they write into its gathered A. */
    public static final int GATHER_CLEAR = KernelAbi.IRIS_FUSED_SITE_GATHER_CLEAR;
    /**
     * All-gather + GEMM with split-K: the second block to finish its half of a tile's K waits for the
     * first one's stores of the other half (same GPU).
     */
    public static final int SPLIT_PARTIAL = KernelAbi.IRIS_FUSED_SITE_SPLIT_PARTIAL;
    /** Launch check: the launch gave less dynamic shared memory than the kernel needs (observed, expected: bytes). */
    public static final int SHARED_BYTES = KernelAbi.IRIS_FUSED_SITE_SHARED_BYTES;

    private FusedSites() {}

    /** E.g. "GEMM + all-reduce / reduce-scatter: waiting for a peer's partial tile", or null for another site. */
    public static String describe(int site) {
        return switch (site) {
            case PARTIAL_FLAG -> "GEMM + all-reduce / reduce-scatter: waiting for a peer's partial tile (the peer's flag "
                    + "for that tile and consumer half)";
            case GATHERED_ROWS -> "all-gather + GEMM: waiting for a peer to push a piece of its rows of A into the gathered A";
            case HANDOFF -> "fused GEMM, spare-warp variant: the spare warps waiting for the consumers to hand over a finished "
                    + "tile (on this GPU; a stall here means the consumers stopped, e.g. waiting on a peer)";
            case GATHER_CLEAR -> "all-gather + GEMM: waiting for a peer to start the same call (before writing into its "
                    + "gathered A)";
            case SPLIT_PARTIAL -> "all-gather + GEMM, split-K: waiting for the other half of a tile's K loop from the block "
                    + "that finished it first (on this GPU; that block had only its stores left, so a stall here means it "
                    + "stopped)";
            case SHARED_BYTES -> "fused GEMM: launched with less dynamic shared memory than the kernel needs (observed: the "
                    + "launch's bytes, expected: the kernel's)";
            default -> null;
        };
    }
}

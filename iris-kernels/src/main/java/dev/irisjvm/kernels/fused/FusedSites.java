package dev.irisjvm.kernels.fused;

/**
 * Wait sites of the fused GEMM + communication kernels ({@code gemm/fused_common.cuh},
 * {@code FusedSite}): a device timeout's message says "wait site N", and {@link #describe(int)}
 * turns N into the operation and the wait, as {@link dev.irisjvm.kernels.ccl.CclSites} does for
 * the collectives.
 */
public final class FusedSites {
    /** GEMM + all-reduce / reduce-scatter: a tile's owner waits for a peer's partial of that tile. */
    public static final int PARTIAL_FLAG = 9001;
    /** All-gather + GEMM: the producer waits until a peer has pushed the piece of its rows of A that the next loads read. */
    public static final int GATHERED_ROWS = 9002;
    /** Spare-warp variants: the spare warps wait for the consumers to hand over a finished tile (same GPU). */
    public static final int HANDOFF = 9003;
    /** All-gather + GEMM: the spare warps wait until a peer's call has started before they write into its gathered A. */
    public static final int GATHER_CLEAR = 9004;
    /** All-gather + GEMM with split-K: a block waits for the other half of its tile's K from the block beside it (same GPU). */
    public static final int SPLIT_PARTIAL = 9005;

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
                    + "beside it (on this GPU; a stall here means that block stopped, e.g. waiting on a peer's rows of A)";
            default -> null;
        };
    }
}

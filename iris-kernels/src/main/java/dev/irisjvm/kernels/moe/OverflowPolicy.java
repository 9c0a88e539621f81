package dev.irisjvm.kernels.moe;

import dev.irisjvm.runtime.abi.global.KernelAbi;

/**
 * What {@link MoeDispatch} does with a route whose expert is full: its place in the expert's rows
 * (by source rank, then route number) is at or past the capacity. Under both policies the row is
 * not delivered, {@link MoeCombine} gives it no contribution (as if its weight were 0), and
 * {@link MoeDispatch#stats} counts it; no route is ever lost without a trace.
 */
public enum OverflowPolicy {
    /**
     * An error: every rank records device error 16 (check {@link MoeSites#OVER_CAPACITY}) naming the
     * lowest full expert, its rank, the rows routed to it and the capacity, and the next
     * {@code Iris.synchronize} throws {@link dev.irisjvm.core.IrisDeviceException} with them.
     */
    FAIL(KernelAbi.IRIS_MOE_POLICY_FAIL),
    /** Counted only: {@link MoeStats#droppedHere()} and {@link MoeStats#droppedAll()} say how many. */
    DROP(KernelAbi.IRIS_MOE_POLICY_DROP);

    private final int code;

    OverflowPolicy(int code) {
        this.code = code;
    }

    /** iris_moe_args.policy (iris/abi/moe.h). */
    int code() {
        return code;
    }
}

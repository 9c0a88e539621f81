package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;

/**
 * The token exchange a MoE scenario drives, whichever mode: {@link MoeDispatch} with its {@link
 * MoeCombine}, or {@link MoeLowLatency}; what the scenarios that only dispatch and combine need.
 *
 * @param received the receive buffer, which identity experts hand to combine as their outputs
 */
record MoeExchange(DispatchCall dispatchCall, CombineCall combineCall, SymTensor received, Runnable closer)
        implements AutoCloseable {

    @FunctionalInterface
    interface DispatchCall {
        void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream);
    }

    @FunctionalInterface
    interface CombineCall {
        void combine(SymTensor expertOutputs, SymTensor out, Stream stream);
    }

    /** Collective: a MoeDispatch and its MoeCombine, closed together. */
    static MoeExchange normal(Iris iris, MoeConfig config) {
        MoeDispatch dispatch = MoeDispatch.create(iris, config);
        try {
            MoeCombine combine = MoeCombine.create(dispatch);
            return new MoeExchange(dispatch::dispatch, combine::combine, dispatch.received(), () -> {
                try (dispatch) {
                    combine.close();
                }
            });
        } catch (RuntimeException | Error e) {
            dispatch.close();
            throw e;
        }
    }

    /** Collective: a MoeLowLatency. */
    static MoeExchange lowLatency(Iris iris, MoeConfig config) {
        MoeLowLatency ll = MoeLowLatency.create(iris, config);
        return new MoeExchange(ll::dispatch, ll::combine, ll.received(), ll::close);
    }

    void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream) {
        dispatchCall.dispatch(tokens, expertIds, weights, numTokens, stream);
    }

    void combine(SymTensor expertOutputs, SymTensor out, Stream stream) {
        combineCall.combine(expertOutputs, out, stream);
    }

    @Override
    public void close() {
        closer.run();
    }
}

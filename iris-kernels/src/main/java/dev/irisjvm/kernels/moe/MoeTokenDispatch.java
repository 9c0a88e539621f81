package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;

/**
 * What the dispatch of both MoE modes offers ({@link MoeDispatch} for batches of many tokens, {@link
 * MoeLowLatency} for decode steps): each rank sends its tokens to the ranks of their experts, and
 * finds the rows its local experts received in {@link #received()} and how many in {@link
 * #counts()}, laid out as each mode says. Code that runs either mode can hold this type.
 *
 * <pre>{@code
 * try (MoeTokenDispatch d = decode ? MoeLowLatency.create(iris, config) : MoeDispatch.create(iris, config)) {
 *     d.dispatch(tokens, expertIds, weights, stream);
 *     // the local experts run on d.received(), d.counts() rows each
 * }
 * }</pre>
 */
public interface MoeTokenDispatch extends AutoCloseable {
    /**
     * Sends this rank's first {@code numTokens} tokens to their experts. {@code tokens}: BF16 [rows,
     * hidden]; {@code expertIds}: I32 [rows, topK], each in [0, experts); {@code weights}: F32 [rows,
     * topK]; rows >= numTokens, numTokens in [0, maxTokens]. Once it has run on {@code stream},
     * {@link #received()} and {@link #counts()} hold this call's rows from every rank.
     */
    void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, int numTokens, Stream stream);

    /** {@link #dispatch(SymTensor, SymTensor, SymTensor, int, Stream)} of every row of {@code tokens}. */
    default void dispatch(SymTensor tokens, SymTensor expertIds, SymTensor weights, Stream stream) {
        dispatch(tokens, expertIds, weights, MoeChecks.rows(tokens), stream);
    }

    MoeConfig config();

    /** Experts on each rank: experts / world. */
    int localExperts();

    /** The global id of this rank's local expert 0 (rank x localExperts). */
    int firstExpert();

    /** The receive buffer (this instance's; do not close it). */
    SymTensor received();

    /** Valid rows of the receive buffer's parts in the last dispatch, I32 on the device. */
    SymTensor counts();

    /** Bytes of the symmetric heap this instance holds on every rank. */
    long heapBytes();

    /** Frees this rank's part of the symmetric heap and the kernels' state; collective. */
    @Override
    void close();
}

package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.LaunchShape;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Kernel;
import dev.irisjvm.core.internal.KernelModule;
import dev.irisjvm.kernels.TensorChecks;
import dev.irisjvm.kernels.moe.MoeChecks.Operand;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * MoE combine, the inverse of an {@link MoeDispatch}: each expert output row goes back to its
 * token's home rank, which sums a token's rows with the routing weights ({@code moe_combine.cu}).
 * It works on the dispatch's buffers (the sources, the routes and weights it kept, combine's
 * staging), so creating one is local and allocates nothing.
 *
 * <pre>{@code
 * try (MoeCombine combine = MoeCombine.create(dispatch)) {
 *     dispatch.dispatch(x, ids, w, s);
 *     experts(dispatch.received(), dispatch.counts(), out, s);   // out: [localExperts, capacity, hidden]
 *     combine.combine(out, y, s);                                // y: [tokens, hidden]
 * }
 * }</pre>
 *
 * <h2>What it computes</h2>
 * For each of the dispatch's tokens t of this rank:
 * {@code out[t] = bf16( sum over k = 0 .. topK-1, in that order, of w[t][k] * expertOutputs[row of route (t, k)] )},
 * accumulated in f32 with fused multiply-adds and rounded once (to nearest even). A route that was
 * not delivered (its expert full, or its id out of range) contributes nothing; a token none of
 * whose routes were delivered gets zeros. The same bits on every run.
 *
 * <h2>Protocol</h2>
 * moe_combine_send: row j below counts[l] of local expert l came from route i of rank src
 * (sources[l][j]); its output row goes into rank src's staging row i (remote stores). The last
 * block signals "results sent" to every peer and waits for every peer's (wait site {@link
 * MoeSites#RESULTS}). moe_combine_reduce then sums each token's staging rows locally. Writing into
 * a peer's staging is safe without a handshake of its own: the peer arrived at the dispatch this
 * combine follows, so its previous combine had ended.
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>Each combine follows its own dispatch on the same stream: at most one combine per dispatch
 *     (a second one is refused with {@link IllegalStateException}), on every rank alike.</li>
 * <li>{@code expertOutputs}: BF16 [localExperts, capacity, hidden] (or [localExperts * capacity,
 *     hidden]), row j of expert l being the output for received row j; rows at or past counts[l]
 *     are not read. It may be the receive buffer itself ({@link MoeDispatch#received()}), e.g.
 *     after an in-place expert. {@code out}: BF16 [rows, hidden] with rows at least the dispatch's
 *     tokens; it may be the dispatch's tokens.</li>
 * <li>Enqueue only; the checks are {@link MoeDispatch}'s kind.</li>
 * </ul>
 */
public final class MoeCombine implements AutoCloseable {
    private final MoeDispatch dispatch;
    private final MoeConfig config;
    private final int rank;
    private final int localExperts;
    private final MoeArgs args;
    private final Kernel sendKernel;
    private final Kernel reduceKernel;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MoeCombine(MoeDispatch dispatch) {
        this.dispatch = dispatch;
        this.config = dispatch.config();
        this.rank = dispatch.rank;
        this.localExperts = dispatch.localExperts();
        KernelModule m = dispatch.library.module(MoeDispatch.COMBINE_MODULE);
        this.sendKernel = m.kernel(MoeDispatch.COMBINE_SEND_KERNEL);
        this.reduceKernel = m.kernel(MoeDispatch.COMBINE_REDUCE_KERNEL);
        this.args = new MoeArgs(dispatch.iris.deviceContext().bytes(), config, dispatch.layout(), dispatch.buffers());
    }

    /** The combine of {@code dispatch}'s calls. Local: allocates nothing, every rank may create it when it likes. */
    public static MoeCombine create(MoeDispatch dispatch) {
        if (dispatch == null) throw new IllegalArgumentException("MoeCombine.create: dispatch must not be null");
        dispatch.ensureOpen("MoeCombine.create");
        return new MoeCombine(dispatch);
    }

    /**
     * Sends {@code expertOutputs}' rows home and writes each of the last dispatch's tokens' weighted
     * sum into {@code out} (see the class comment).
     */
    public void combine(SymTensor expertOutputs, SymTensor out, Stream stream) {
        final String call = "combine";
        synchronized (dispatch) {
            ensureOpen(call);
            int numTokens = dispatch.pendingTokens(call);
            Operand e = MoeChecks.operand(rank, call, "expertOutputs", expertOutputs, dispatch.heap());
            Operand o = MoeChecks.operand(rank, call, "out", out, dispatch.heap());
            TensorChecks.notNull(rank, call, "stream", stream);
            MoeChecks.expertOutputs(rank, call, e, config.dtype(), localExperts, config.capacity(), config.hidden());
            MoeChecks.matrix(rank, call, o, config.dtype(), config.hidden(), numTokens, "hidden");
            var a = args.combine(expertOutputs.deviceAddress(), out.deviceAddress(), numTokens);
            int limit = dispatch.rowBlockLimit;
            sendKernel.launch(LaunchShape.of(MoeLayout.rowBlocks((long) localExperts * config.capacity(), limit), MoeLayout.THREADS),
                    stream, a, false);
            reduceKernel.launch(LaunchShape.of(MoeLayout.rowBlocks(numTokens, limit), MoeLayout.THREADS), stream, a, false);
            dispatch.combined();
        }
    }

    public MoeDispatch dispatch() {
        return dispatch;
    }

    private void ensureOpen(String call) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + call + " called after MoeCombine.close()");
        }
    }

    /** Releases the argument struct; the buffers are the dispatch's. Safe to call twice. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            args.close();
        }
    }

    @Override
    public String toString() {
        return "MoeCombine(" + dispatch + (closed.get() ? ", closed" : "") + ")";
    }
}

package dev.irisjvm.kernels.moe;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.KernelLibrary;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the two token dispatches, {@link MoeDispatch} and {@link MoeLowLatency}, hold alike on a
 * rank: the job and the config, the kernels, the workspace, the receive buffer and its counts and
 * combine's staging on the symmetric heap, whether the instance is open, and the tokens of the
 * dispatch that no combine has followed yet. The layouts of the buffers are each class's own.
 */
abstract sealed class AbstractMoeDispatch implements MoeTokenDispatch permits MoeDispatch, MoeLowLatency {
    final Iris iris;
    final int rank;
    final int world;
    final MoeConfig config;
    final KernelLibrary library;
    final SymTensor workspace;
    final SymTensor recv;
    final SymTensor counts;
    final SymTensor staging;
    /** A grid limit for the row kernels of combine and for MoeDispatch's copying kernel (they stride over the rest). */
    final int rowBlockLimit;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Tokens of the last dispatch that no combine has followed yet, or -1. Guarded by this. */
    private int pendingTokens = -1;

    AbstractMoeDispatch(Iris iris, MoeConfig config, KernelLibrary library, SymTensor workspace, SymTensor recv, SymTensor counts,
                        SymTensor staging) {
        this.iris = iris;
        this.rank = iris.node().index();
        this.world = iris.node().size();
        this.config = config;
        this.library = library;
        this.workspace = workspace;
        this.recv = recv;
        this.counts = counts;
        this.staging = staging;
        this.rowBlockLimit = MoeLayout.rowBlockLimit(iris.deviceProperties().multiprocessorCount());
    }

    @Override
    public MoeConfig config() {
        return config;
    }

    /** Experts on each rank: experts / world. */
    @Override
    public int localExperts() {
        return config.experts() / world;
    }

    /** The global id of this rank's local expert 0 (rank x localExperts). */
    @Override
    public int firstExpert() {
        return rank * localExperts();
    }

    /** The receive buffer, BF16, laid out as the class comment says (this instance's; do not close it). */
    @Override
    public SymTensor received() {
        return recv;
    }

    /** Valid rows of the receive buffer's parts in the last dispatch, I32 on the device, laid out as the class comment says. */
    @Override
    public SymTensor counts() {
        return counts;
    }

    /** The heap its buffers and its callers' tensors are on. */
    SymmetricHeap heap() {
        return iris.heap();
    }

    void ensureOpen(String call) {
        if (closed.get()) {
            throw new IllegalStateException("rank " + rank + ": " + call + " called after " + getClass().getSimpleName() + ".close()");
        }
    }

    /** Whether a dispatch waits for its combine (call with this locked). */
    boolean dispatchPending() {
        return pendingTokens >= 0;
    }

    /** A dispatch of {@code numTokens} has been enqueued (call with this locked). */
    void dispatched(int numTokens) {
        pendingTokens = numTokens;
    }

    /** The tokens of the dispatch that {@code call} (a combine) follows; throws if there is none. Call with this locked. */
    int pendingTokens(String call) {
        ensureOpen(call);
        if (pendingTokens < 0) {
            throw new IllegalStateException("rank " + rank + ": " + call + ": no dispatch to combine: each combine follows its own"
                    + " dispatch (call dispatch first)");
        }
        return pendingTokens;
    }

    /** The pending dispatch has its combine (call with this locked). */
    void combined() {
        pendingTokens = -1;
    }

    /** What only the subclass holds, closed before the buffers all dispatches have. */
    abstract List<AutoCloseable> ownResources();

    /**
     * Collective: frees the buffers (after this rank's default stream is idle; synchronize the
     * streams the calls ran on first) and unloads the kernels. Safe to call twice.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            List<AutoCloseable> parts = new ArrayList<>(ownResources());
            parts.addAll(List.of(staging, counts, recv, workspace, library));
            Resources.closeAll(parts);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(rank " + rank + "/" + world + ", " + config + ", experts " + firstExpert() + ".."
                + (firstExpert() + localExperts() - 1) + " here" + (closed.get() ? ", closed" : "") + ")";
    }
}

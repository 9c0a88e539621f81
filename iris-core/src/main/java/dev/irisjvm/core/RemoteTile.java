package dev.irisjvm.core;

import dev.irisjvm.core.gpu.Stream;

/**
 * A tile of a symmetric tensor in a given rank's copy; {@code rank} is a node rank (an index in
 * {@link Iris#node()}, the ranks the heap spans), the world rank on a job of one node. Its operations are one-sided: this rank
 * enqueues a kernel that reads or writes the peer's memory directly over NVLink; the peer runs
 * nothing and need not know. Order them against the peer's own work with {@link Iris#barrier()}.
 *
 * <pre>{@code
 * SymTensor a = heap.randn(DType.F32, 1024, 1024);
 * SymTensor b = heap.zeros(DType.F32, 1024, 1024);
 * iris.barrier();
 * a.tile(0, 0, 256, 256).on(peer).loadRemote(b.tile(0, 0, 256, 256));   // b[window] = peer's a[window]
 * b.tile(0, 0, 256, 256).on(peer).atomicAdd(a.tile(0, 0, 256, 256));   // peer's b[window] += a[window]
 * iris.synchronize();
 * }</pre>
 */
public record RemoteTile(Tile tile, int rank) {
    public RemoteTile {
        if (tile == null) {
            throw new IllegalArgumentException("remote tile: tile must not be null");
        }
        tile.tensor().heap().iris().checkNodeRank(rank, "RemoteTile(target rank)");
    }

    /** Copies this remote window into the local tile {@code dst} (same shape and dtype), on the default stream. */
    public void loadRemote(Tile dst) {
        loadRemote(dst, iris().stream());
    }

    public void loadRemote(Tile dst, Stream stream) {
        check(dst, "loadRemote", "dst");
        iris().kernels().tileCopy(iris().deviceContext(), dtype().byteSize(), dst.address(), dst.leadingDimension(),
                iris().node().index(), tile.address(), tile.leadingDimension(), rank, tile.rows(), tile.cols(), stream);
    }

    /** Copies the local tile {@code src} into this remote window, on the default stream. */
    public void storeRemote(Tile src) {
        storeRemote(src, iris().stream());
    }

    public void storeRemote(Tile src, Stream stream) {
        check(src, "storeRemote", "src");
        iris().kernels().tileCopy(iris().deviceContext(), dtype().byteSize(), tile.address(), tile.leadingDimension(),
                rank, src.address(), src.leadingDimension(), iris().node().index(), tile.rows(), tile.cols(), stream);
    }

    /** Adds the local tile {@code src} into this remote window, element by element with atomics. */
    public void atomicAdd(Tile src) {
        atomicAdd(src, iris().stream());
    }

    public void atomicAdd(Tile src, Stream stream) {
        check(src, "atomicAdd", "src");
        iris().kernels().tileAtomicAdd(iris().deviceContext(), dtype(), tile.address(), tile.leadingDimension(), rank,
                src.address(), src.leadingDimension(), tile.rows(), tile.cols(), stream);
    }

    private Iris iris() {
        return tile.tensor().heap().iris();
    }

    private DType dtype() {
        return tile.tensor().dtype();
    }

    private void check(Tile local, String op, String argument) {
        if (local == null) {
            throw new IllegalArgumentException(tile.tensor().rankLabel() + ": " + op + ": " + argument + " must not be null");
        }
        tile.tensor().ensureLive(op);
        local.tensor().ensureLive(op);
        if (local.tensor().heap() != tile.tensor().heap()) {
            throw new IllegalArgumentException(tile.tensor().rankLabel() + ": " + op + ": " + argument
                    + " belongs to another Iris instance's heap");
        }
        if (local.tensor().dtype() != dtype()) {
            throw new IllegalArgumentException(tile.tensor().rankLabel() + ": " + op + ": " + argument + " has dtype "
                    + local.tensor().dtype() + ", the remote tile has " + dtype());
        }
        if (!local.sameShape(tile)) {
            throw new IllegalArgumentException(tile.tensor().rankLabel() + ": " + op + ": " + argument + " is "
                    + local.rows() + " x " + local.cols() + ", the remote tile is " + tile.rows() + " x " + tile.cols());
        }
    }
}
